# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures for the end-to-end tests: the installed binaries and the repo's paths."""
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from file_times import FileTimes

REPO_ROOT = Path(__file__).resolve().parents[2]
# Real build.toml files of the reference's example kernels, vendored (tests/data/build-toml/
# SOURCE.md); a missing or empty folder is a collection error, never a smaller suite.
CORPUS_DIR = REPO_ROOT / "tests" / "data" / "build-toml"
if not any(CORPUS_DIR.glob("*.toml")):
    raise RuntimeError(f"the build.toml corpus is missing: no *.toml in {CORPUS_DIR}")
VENV_BIN = REPO_ROOT / ".venv" / "bin"
EXAMPLES = REPO_ROOT / "examples"


def pytest_configure(config):
    # The longest files first, and the seconds of each file in the summary (file_times.py).
    config.pluginmanager.register(FileTimes(), "kernelhub-file-times")


def _binary(name: str) -> Path:
    # KERNELHUB_BIN_DIR points the tests at a build tree instead of the installed binaries.
    override = os.environ.get("KERNELHUB_BIN_DIR")
    path = Path(override) / name if override else VENV_BIN / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            pytest.fail(f"{name} is not installed; run scripts/setup.sh")
        path = Path(found)
    return path


_TORCH_FACTS = """import json, pathlib, torch
print(json.dumps({"version": torch.__version__, "cuda": torch.version.cuda or "",
                  "cuda_available": torch.cuda.is_available(),
                  "package_dir": str(pathlib.Path(torch.__file__).parent),
                  "site_packages": str(pathlib.Path(torch.__file__).parents[1])}))
"""


@functools.cache  # one torch import per process: each costs seconds of CPU, at collection too
def venv_torch() -> dict:
    """What the tests ask of the .venv's torch, from one interpreter that imports it: `version`
    ("2.15.0+cu132"), `cuda` (torch.version.cuda, "" for a build without CUDA),
    `cuda_available`, `package_dir` and `site_packages` (the folder holding torch). {} when the
    .venv or its torch is missing (the tests that need it then skip)."""
    python = VENV_BIN / "python"
    if not python.exists():
        return {}
    result = subprocess.run([str(python), "-c", _TORCH_FACTS], capture_output=True, text=True,
                            timeout=120)
    return json.loads(result.stdout) if result.returncode == 0 else {}


def venv_cpu_variant() -> str:
    """The cpu variant name of the .venv's torch on x86_64 Linux, as
    "torch215-cxx11-cpu-x86_64-linux"."""
    major, minor = venv_torch()["version"].split("+")[0].split(".")[:2]
    return f"torch{major}{minor}-cxx11-cpu-x86_64-linux"


@pytest.fixture(scope="session")
def kernel_builder() -> Path:
    return _binary("kernel-builder")


@pytest.fixture(scope="session")
def kernelhub_bin() -> Path:
    return _binary("kernelhub")


def run(args, *, cwd=None, check=False, env=None):
    """Runs a command and returns the CompletedProcess with text output."""
    merged = dict(os.environ)
    if env:
        merged.update(env)
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=merged, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=600,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{args} failed with {result.returncode}\nstdout:\n{result.stdout}\n"
            f"stderr:\n{result.stderr}"
        )
    return result


@pytest.fixture(scope="session")
def testtool() -> Path:
    """kernelhub-testtool (tests/tools): runs library functions for the differential tests.

    Found via KERNELHUB_TESTTOOL, else beside KERNELHUB_BIN_DIR's build tree (whose cli dir is
    <build>/src/kernelhub/cli), else in KERNELHUB_BUILD_DIR (default build/).
    """
    candidates = [os.environ.get("KERNELHUB_TESTTOOL")]
    if os.environ.get("KERNELHUB_BIN_DIR"):
        build = Path(os.environ["KERNELHUB_BIN_DIR"]).parents[2]
        candidates.append(build / "tests" / "tools" / "kernelhub-testtool")
    # scripts/test.sh builds into KERNELHUB_BUILD_DIR (default build/).
    build_dir = Path(os.environ.get("KERNELHUB_BUILD_DIR", "build"))
    candidates.append((REPO_ROOT / build_dir) / "tests" / "tools" / "kernelhub-testtool")
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return Path(candidate)
    pytest.fail("kernelhub-testtool not found; set KERNELHUB_TESTTOOL or build the tests")


class HubServer:
    """A running `kernelhub serve`: its base URL, a write token and its root folder."""

    def __init__(self, url: str, token: str, root: Path, process: subprocess.Popen):
        self.url = url
        self.token = token
        self.root = root
        self.process = process


def start_hub_server(kernelhub_bin, folder: Path, config: str = "", name: str = "hub-root"):
    """Starts `kernelhub serve --port 0` on a fresh root under `folder` (with `config` as its
    config.toml when given) and a token file; the caller stops it with stop_hub_server."""
    root = folder / name
    token = "kh-test-token"
    token_file = folder / f"{name}-tokens"
    token_file.write_text(token + "\n")
    if config:
        root.mkdir(parents=True, exist_ok=True)
        (root / "config.toml").write_text(config)
    process = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        pytest.fail(f"kernelhub serve did not start: {process.stderr.read()}")
    return HubServer(url, token, root, process)


def stop_hub_server(server: HubServer):
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture
def hub_server(kernelhub_bin, tmp_path):
    """Starts `kernelhub serve --port 0` on a fresh root with a token file; stops it after."""
    server = start_hub_server(kernelhub_bin, tmp_path)
    yield server
    stop_hub_server(server)


def example_unique_id(name: str) -> str:
    """The fixed unique id the e2e tests build examples/<name> with (so its kernel id is
    `_<python name>_<backend>_<this>`): one id per example, so a second build of the same
    sources in another folder under CCACHE_BASEDIR is a ccache hit."""
    return "e2e" + hashlib.sha256(name.encode()).hexdigest()[:10]


class BuiltExample:
    """One example built by `built_example`: its folder and the build's CompletedProcess."""

    def __init__(self, kernel: Path, result: subprocess.CompletedProcess):
        self.kernel = kernel
        self.result = result

    @property
    def summary(self) -> dict:
        """The build's --json report; fails the test where the build failed."""
        assert self.result.returncode == 0, self.result.stderr
        return json.loads(self.result.stdout)


def copy_built(source: Path, destination: Path) -> Path:
    """A copy of a `built_example` tree (or of a folder in it) to change. Bytecode is left out:
    a loader that writes it (the reference's) may be writing some into the shared tree from
    another worker at this moment."""
    shutil.copytree(source, destination, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def _shared_temp(tmp_path_factory) -> Path:
    """A folder every worker of this pytest run sees (pytest-xdist gives each worker its own
    basetemp under the run's), and only this run."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def built_example(kernel_builder, tmp_path_factory):
    """`built_example(name, backends=None)`: a copy of examples/<name> (in a folder named
    <name>) built once per test run, shared by every test that only needs that example built,
    in whichever worker it runs: the first to ask builds it under a file lock, the others wait
    for that build and read its record. Every backend of its build.toml this machine can build,
    or only `backends` (build.toml's list replaced), the checks on, `--json -v`, the unique id
    example_unique_id(name) and ccache paths relative to the copy. The tree is shared: read it,
    run it, never change it (copy it first; a copy keeps the build's records, which are hashes,
    so `clean` and `upload` treat it as built). A loader that writes bytecode (the reference's)
    may leave __pycache__ in its variants, so a test that asserts on their exact files copies
    them first. A failed build is kept too: `.result` says so and `.summary` fails the test."""
    shared = _shared_temp(tmp_path_factory) / "built-examples"
    shared.mkdir(exist_ok=True)
    built = {}

    def build(name: str, backends=None) -> BuiltExample:
        key = (name, tuple(backends) if backends is not None else None)
        if key in built:
            return built[key]
        folder = shared / (name if backends is None else f"{name}--{'-'.join(backends)}")
        folder.mkdir(exist_ok=True)
        kernel, record = folder / name, folder / "build-result.json"
        with open(folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not record.exists():
                # A worker that died mid-build left its copy and no record: start again.
                shutil.rmtree(kernel, ignore_errors=True)
                shutil.copytree(EXAMPLES / name, kernel,
                                ignore=shutil.ignore_patterns("build", "__pycache__"))
                if backends is not None:
                    toml = kernel / "build.toml"
                    text = toml.read_text()
                    chosen = re.sub(r"backends = \[[^\]]*\]",
                                    f"backends = {json.dumps(backends)}", text, count=1)
                    assert chosen != text, f"no backends list in {toml}"
                    toml.write_text(chosen)
                result = run([kernel_builder, "build", kernel, "--python", VENV_BIN / "python",
                              "--json", "-v", "--unique-id", example_unique_id(name)],
                             env={"CCACHE_BASEDIR": str(kernel)})
                partial = record.with_suffix(".partial")
                partial.write_text(json.dumps({"args": [str(a) for a in result.args],
                                               "returncode": result.returncode,
                                               "stdout": result.stdout,
                                               "stderr": result.stderr}))
                partial.replace(record)
            saved = json.loads(record.read_text())
        built[key] = BuiltExample(kernel, subprocess.CompletedProcess(
            saved["args"], saved["returncode"], saved["stdout"], saved["stderr"]))
        return built[key]

    return build
