# SPDX-License-Identifier: Apache-2.0
"""What the loaders check and report around the import of a kernel (issue 21 §1), against the
REFERENCE `kernels` 0.17.2 on the same kernels, through `get_kernel` (from a `kernelhub serve`)
and `get_local_kernel`: `kernels-minver` in metadata.json is enforced before anything of the
kernel is imported; a kernel whose import fails gets a note naming it on its exception; a
kernel built from a dirty git tree is reported on the package's `validate` logger, not as a
Python warning.

Every case runs in both packages, each in a fresh interpreter with a cache of its own, and the
observations (the exception class, text and notes, whether the kernel's code ran, the log
records and warnings) are compared."""
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
RAN = ("import os\nwith open(os.environ['KH_RAN'], 'a') as ran:\n"
       "    ran.write(__name__ + '\\n')\n")


def provenance(kernel_dirty: bool, builder_dirty: bool) -> dict:
    return {"kernel-builder": {"version": "0.1.0", "commit": "a" * 40, "dirty": builder_dirty},
            "kernel": {"commit": "b" * 40, "dirty": kernel_dirty}}


KERNELS = {
    "minver-future": (metadata("minver-future", **{"kernels-minver": "999.1.0"}),
                      RAN + "VALUE = 1\n"),
    "minver-met": (metadata("minver-met", **{"kernels-minver": "0.0.1"}), RAN + "VALUE = 2\n"),
    "broken": (metadata("broken"), RAN + "raise RuntimeError('kernel is broken')\n"),
    "dirty-source": (metadata("dirty-source", provenance=provenance(True, False)),
                     RAN + "VALUE = 3\n"),
    "dirty-both": (metadata("dirty-both", provenance=provenance(True, True)),
                   RAN + "VALUE = 4\n"),
    "clean": (metadata("clean", provenance=provenance(False, False)), RAN + "VALUE = 5\n"),
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
        commits = {name: publish(url, TOKEN, f"{ORG}/{name}", write_kernel(local, name))
                   for name in KERNELS}
        yield {"url": url, "local": local, "commits": commits}
    finally:
        server.terminate()
        server.wait(timeout=10)


LOAD = """
    import json, logging, os, warnings
    import {package} as k
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            # The package's own loggers compare under one name: kernels.x and kernelhub.x.
            name = record.name.replace("{package}.", "PKG.", 1)
            records.append([name, record.levelname, record.getMessage()])

    logging.getLogger().addHandler(Keep())
    logging.getLogger().setLevel(logging.INFO)
    out = {{}}
    for how, name in {calls!r}:
        open(os.environ["KH_RAN"], "w").close()
        records.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if how == "hub":
                    module = k.get_kernel("{org}/" + name, revision="main", backend="cpu")
                else:
                    module = k.get_local_kernel(__import__("pathlib").Path({local!r}) / name,
                                                backend="cpu")
                result = ["ok", module.VALUE]
            except Exception as error:
                result = [type(error).__name__, str(error), getattr(error, "__notes__", [])]
        ran = open(os.environ["KH_RAN"]).read().split()
        out[how + ":" + name] = {{"result": result, "ran": ran,
                                  "records": [r for r in records
                                              if "dirty git tree" in r[2]],
                                  "warnings": [str(w.message) for w in caught
                                               if "dirty git tree" in str(w.message)]}}
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
    # Ours names what is installed as kernels does (the kernels API version), then kernelhub's
    # own version and what to upgrade.
    import kernelhub
    assert refused["result"][1] == (
        f"{MINVER_PREFIX}version {kernelhub.compat_version} is installed (the kernels API of "
        f"kernelhub {kernelhub.__version__}). Upgrade kernelhub to a release that implements "
        "kernels>=999.1.0."), refused
    # A requirement that is met loads in both.
    assert loaded["result"] == reference[f"{how}:minver-met"]["result"] == ["ok", 2]


def origin(name, how):
    # get_kernel(revision="main") records the revision as it was asked.
    return f"({ORG}/{name}, revision: main)" if how == "hub" else ""


@pytest.mark.parametrize("how", ["hub", "local"])
def test_a_failed_import_names_the_kernel_in_a_note(hub, tmp_path, how):
    ours, reference = both(hub, tmp_path, [(how, "broken")])
    assert ours == reference
    result = ours[f"{how}:broken"]["result"]
    assert result[:2] == ["RuntimeError", "kernel is broken"]
    assert result[2] == [f"while importing kernel 'broken', variant '{VARIANT}' "
                         + origin("broken", how)]


@pytest.mark.parametrize("how", ["hub", "local"])
def test_a_dirty_build_is_logged_on_the_validate_logger(hub, tmp_path, how):
    calls = [(how, "dirty-source"), (how, "dirty-both"), (how, "clean"),
             (how, "dirty-source")]  # loaded again: reported again, as kernels validates again
    ours, reference = both(hub, tmp_path, calls)
    assert ours == reference
    record = ours[f"{how}:dirty-both"]["records"]
    assert record == [["PKG.validate", "WARNING",
                       f"Kernel 'dirty-both' variant '{VARIANT}' was built from a dirty git tree "
                       "(kernel source, kernel-builder had uncommitted changes). Its recorded "
                       "git revision does not fully identify the sources it was built from, so "
                       "the build may not be reproducible."]]
    assert ours[f"{how}:dirty-source"]["records"][0][2].count("(kernel source had") == 1
    assert ours[f"{how}:clean"]["records"] == []
    assert all(not entry["warnings"] for entry in ours.values())

