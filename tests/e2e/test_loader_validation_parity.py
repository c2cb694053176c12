# SPDX-License-Identifier: Apache-2.0
"""What the loaders check and report around the import of a kernel (issue 21 §1), against the
REFERENCE `kernels` 0.17.2 on the same kernels: `kernels-minver` in metadata.json is enforced
by `get_kernel` (from a `kernelhub serve`) and `get_local_kernel`, before anything of the kernel
is imported.

Every case runs in both packages, each in a fresh interpreter with a cache of its own, and the
observations (the exception class and text, whether the kernel's code ran) are compared."""
import json
import os
import subprocess

import pytest

from conftest import VENV_BIN
from hub_cache_support import last_json, publish, run_python

PYTHON = VENV_BIN / "python"
TOKEN = "kh-validation-token"
ORG = "trusted"
VARIANT = "torch-universal"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")


def metadata(name: str, **extra) -> dict:
    doc = {"name": name, "id": f"_{name.replace('-', '_')}_validation", "version": 1,
           "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}
    doc.update(extra)
    return doc


# name -> (metadata.json, __init__.py). Each kernel's code appends its name to the file named
# by KH_RAN, so a test can tell whether it was imported.
RAN = "import os\nopen(os.environ['KH_RAN'], 'a').write(__name__ + '\\n')\n"
KERNELS = {
    "minver-future": (metadata("minver-future", **{"kernels-minver": "999.1.0"}),
                      RAN + "VALUE = 1\n"),
    "minver-met": (metadata("minver-met", **{"kernels-minver": "0.0.1"}), RAN + "VALUE = 2\n"),
}


def write_kernel(folder, name):
    doc, init = KERNELS[name]
    variant = folder / name / "build" / VARIANT
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(doc))
    (variant / "__init__.py").write_text(init)
    return folder / name


@pytest.fixture(scope="module")
def hub(kernelhub_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("validation")
    root = tmp / "root"
    root.mkdir()
    (root / "config.toml").write_text(f"[organizations.{ORG}]\ntrustedKernelPublisher = true\n")
    (tmp / "tokens").write_text(TOKEN + "\n")
    server = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    local = tmp / "local"
    try:
        for name in KERNELS:
            publish(url, TOKEN, f"{ORG}/{name}", write_kernel(local, name))
        yield {"url": url, "local": local}
    finally:
        server.terminate()
        server.wait(timeout=10)


LOAD = """
    import json, os
    import {package} as k
    out = {{}}
    for how, name in {calls!r}:
        open(os.environ["KH_RAN"], "w").close()
        try:
            if how == "hub":
                module = k.get_kernel("{org}/" + name, revision="main", backend="cpu")
            else:
                module = k.get_local_kernel(__import__("pathlib").Path({local!r}) / name,
                                            backend="cpu")
            result = ["ok", module.VALUE]
        except Exception as error:
            result = [type(error).__name__, str(error)]
        ran = open(os.environ["KH_RAN"]).read().split()
        out[how + ":" + name] = {{"result": result, "ran": ran}}
    print(json.dumps(out))
"""


def both(hub, tmp_path, calls):
    results = {}
    for package in ("kernels", "kernelhub"):
        env = {"HF_ENDPOINT": hub["url"], "HF_HOME": str(tmp_path / package / "home"),
               "HF_HUB_CACHE": str(tmp_path / package / "cache"),
               "KH_RAN": str(tmp_path / f"{package}-ran"),
               "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        if os.environ.get("KERNELHUB_PYTHON_DIR"):
            env["PYTHONPATH"] = os.environ["KERNELHUB_PYTHON_DIR"]
        code = LOAD.format(package=package, calls=calls, org=ORG, local=str(hub["local"]))
        results[package] = last_json(run_python(code, env))
    return results["kernelhub"], results["kernels"]


MINVER_PREFIX = (f"Kernel 'minver-future' variant '{VARIANT}' requires kernels>=999.1.0, but ")


@pytest.mark.parametrize("how", ["hub", "local"])
def test_kernels_minver_is_enforced_before_the_import(hub, tmp_path, how):
    ours, reference = both(hub, tmp_path, [(how, "minver-future"), (how, "minver-met")])
    refused, loaded = ours[f"{how}:minver-future"], ours[f"{how}:minver-met"]
    # The reference refuses the kernel with a RuntimeError naming the version it needs, and
    # runs none of its code.
    theirs = reference[f"{how}:minver-future"]
    assert theirs["result"][0] == "RuntimeError" and theirs["ran"] == [], theirs
    assert theirs["result"][1].startswith(MINVER_PREFIX), theirs
    assert refused["result"][0] == "RuntimeError" and refused["ran"] == [], refused
    assert refused["result"][1].startswith(MINVER_PREFIX), refused
    # Ours names what is installed in its own terms: kernelhub and the kernels API it matches.
    import kernelhub
    assert refused["result"][1] == (
        f"{MINVER_PREFIX}kernelhub {kernelhub.__version__} implements kernels "
        f"{kernelhub.compat_version}. Upgrade kernelhub to a release that implements "
        "kernels>=999.1.0."), refused
    # A requirement that is met loads in both.
    assert loaded["result"] == reference[f"{how}:minver-met"]["result"] == ["ok", 2]
