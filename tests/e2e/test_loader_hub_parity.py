# SPDX-License-Identifier: Apache-2.0
"""Version resolution parity (loader.md §4.1): `kernelhub.get_kernel`, `has_kernel` and
`get_kernel_variants` against the REFERENCE `kernels` on one `kernelhub serve`, a kernel with
versions 1, 2 and 10 (numeric, not string, order) and a main branch. Each call runs in both
packages (each in its own process and cache); the loaded version, the exception class and
text, and the outdated-version warning must be the same."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import VENV_BIN
from hub_cache_support import last_json, publish, run_python

PYTHON = VENV_BIN / "python"
TOKEN = "kh-parity-token"
REPO = "trusted/versions"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")


def write_version(folder: Path, number: int) -> None:
    variant = folder / "build" / "torch-cpu"
    variant.mkdir(parents=True, exist_ok=True)
    (variant / "metadata.json").write_text(json.dumps(
        {"id": f"_versions_cpu_v{number}", "name": "versions", "version": number,
         "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text(f"VERSION = {number}\n")


@pytest.fixture(scope="module")
def hub(kernelhub_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("parity")
    root = tmp / "root"
    root.mkdir()
    (root / "config.toml").write_text("[organizations.trusted]\ntrustedKernelPublisher = true\n")
    (tmp / "tokens").write_text(TOKEN + "\n")
    server = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    commits = {}
    for number in (1, 2, 10):
        folder = tmp / f"v{number}"
        write_version(folder, number)
        commits[number] = publish(url, TOKEN, REPO, folder, branches=(f"v{number}",))
    yield {"url": url, "commits": commits}
    server.terminate()
    server.wait(timeout=10)


CALLS = """
    import json, logging
    import {package} as k
    records = []
    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
    logging.getLogger().addHandler(Keep())
    out = []
    for call, kwargs in {calls!r}:
        records.clear()
        try:
            if call == "get_kernel":
                value = k.get_kernel({repo!r}, backend="cpu", **kwargs).VERSION
            elif call == "has_kernel":
                value = k.has_kernel({repo!r}, backend="cpu", **kwargs)
            else:
                value = [[type(d).__name__, getattr(d.variant, "variant_str", d.variant),
                          str(getattr(d, "reason", None))]
                         for d in k.get_kernel_variants({repo!r}, backend="cpu", **kwargs)]
            result = ["ok", value]
        except Exception as e:
            result = [type(e).__name__, str(e)]
        warned = [r for r in records if "You are using version" in r]
        out.append([result, warned])
    print(json.dumps(out))
"""


def both(hub, tmp_path, calls, **extra_env):
    results = {}
    for package in ("kernels", "kernelhub"):
        env = {"HF_ENDPOINT": hub["url"], "HF_HOME": str(tmp_path / package / "home"),
               "HF_HUB_CACHE": str(tmp_path / package / "cache"),
               "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        if os.environ.get("KERNELHUB_PYTHON_DIR"):
            env["PYTHONPATH"] = os.environ["KERNELHUB_PYTHON_DIR"]
        env.update(extra_env)
        code = CALLS.format(package=package, calls=calls, repo=REPO)
        results[package] = last_json(run_python(code, env))
    return results["kernelhub"], results["kernels"]


def test_version_resolution_and_its_errors_match_the_reference(hub, tmp_path):
    sha2 = hub["commits"][2]
    calls = [
        ("get_kernel", {"version": 10}),
        ("get_kernel", {"version": 2}),            # outdated: the warning names version 10
        ("get_kernel", {"version": 7}),            # "Version 7 not found, available versions: 1, 2, 10"
        ("get_kernel", {"version": 1, "revision": "v1"}),
        ("get_kernel", {}),
        ("get_kernel", {"revision": "v1"}),
        ("get_kernel", {"revision": sha2}),
        ("get_kernel", {"revision": "main"}),
        ("has_kernel", {"version": 1}),
        ("has_kernel", {"version": 7}),
        ("get_kernel_variants", {"version": 2}),
    ]
    ours, reference = both(hub, tmp_path, calls)
    assert len(ours) == len(calls)
    for call, mine, theirs in zip(calls, ours, reference):
        assert mine == theirs, f"{call}: ours {mine} reference {theirs}"
    # The expected values themselves, so a shared mistake cannot pass.
    assert ours[0][0] == ["ok", 10]
    assert ours[1][0] == ["ok", 2] and ours[1][1] == [
        f"You are using version 2 of '{REPO}', but version 10 is available."]
    assert ours[2][0] == ["ValueError", "Version 7 not found, available versions: 1, 2, 10"]
    assert ours[3][0][0] == ours[4][0][0] == "ValueError"
    assert [r[0] for r in ours[5:8]] == [["ok", 1], ["ok", 2], ["ok", 10]]
    # has_kernel and get_kernel_variants warn about an outdated version as get_kernel does.
    outdated = [f"You are using version 1 of '{REPO}', but version 10 is available."]
    assert ours[8] == [["ok", True], outdated]
    assert ours[10][1] == [outdated[0].replace("version 1 ", "version 2 ")]


def test_offline_versions_come_from_the_cache(hub, tmp_path):
    """Ours writes refs/v<N> when it resolves a version, so after one online load the same
    version loads offline; the reference resolves versions online without writing refs/v<N>,
    so its offline `version=` loads fail even on a cache it filled itself."""
    online, _ = both(hub, tmp_path, [("get_kernel", {"version": 2})])
    assert online[0][0] == ["ok", 2]
    calls = [("get_kernel", {"version": 2}), ("get_kernel", {"version": 1})]
    ours, reference = both(hub, tmp_path, calls, HF_HUB_OFFLINE="1",
                           HF_ENDPOINT="http://127.0.0.1:9")
    assert ours[0][0] == ["ok", 2]
    # Version 1 was never fetched: the cached versions are listed as the reference lists the
    # Hub's ("Version 1 not found, available versions: 2"). The reference wrote no refs/v<N>,
    # so offline it has no version at all: its own ValueError.
    assert ours[1][0] == ["ValueError", "Version 1 not found, available versions: 2"]
    assert reference[0][0][0] == reference[1][0][0] == "ValueError"
    assert "offline" in reference[0][0][1]
