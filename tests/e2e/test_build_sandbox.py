# SPDX-License-Identifier: Apache-2.0
"""The build sandbox (issue 24 §2): `kernel-builder build` runs cmake and ninja under bubblewrap
with no network and only the kernel's declared inputs visible.

A build step that downloads (a CMake `file(DOWNLOAD ...)`, from a toolchain file in the kernel's
folder that CMake reads through CMAKE_TOOLCHAIN_FILE, as FetchContent would) fails in the
sandbox although the loopback server it asks is reachable outside it, with a message naming the
URL; with --no-sandbox the same build succeeds, warns, and its provenance says `sandboxed:
false`, which the reference packages still read and `upload` warns about. A source that
includes a header outside the kernel's folder by its absolute path fails the same way, naming
the file; the next sandboxed build starts the tree afresh and drops the mark.
"""
import http.server
import json
import os
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest

from conftest import EXAMPLES, VENV_BIN, example_unique_id, run
from hub_cache_support import hub_env

PYTHON = VENV_BIN / "python"

pytestmark = [
    pytest.mark.skipif(
        not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
        reason="needs the .venv with torch, cmake and ninja"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (bwrap)"),
]


def relu_cpu(root: Path) -> Path:
    kernel = root / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel, ignore=shutil.ignore_patterns("build"))
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    return kernel


def build(kernel_builder, kernel, *args, env=None):
    # The examples' fixed id and CCACHE_BASEDIR, as conftest's built_example: objects the other
    # tests compiled are ccache hits.
    return run([kernel_builder, "build", kernel, "--python", PYTHON, "--json", "--skip-checks",
                "--abi-check", "off", "--unique-id", example_unique_id("relu"), *args],
               env={"CCACHE_BASEDIR": str(kernel), **(env or {})})


def provenance(kernel: Path) -> dict:
    [variant] = [p for p in (kernel / "build").iterdir() if p.name.startswith("torch")]
    return json.loads((variant / "metadata.json").read_text())["provenance"]


@pytest.fixture
def file_server(tmp_path):
    """A loopback HTTP server with one file, reachable from the test (outside any sandbox)."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "data.txt").write_text("downloaded\n")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/data.txt"
    yield url
    server.shutdown()
    thread.join()


def test_a_download_fails_in_the_sandbox_and_is_recorded_without_it(kernel_builder, tmp_path,
                                                                     file_server):
    kernel = relu_cpu(tmp_path)
    fetch = kernel / "cmake" / "fetch.cmake"
    fetch.parent.mkdir()
    fetch.write_text(f"""# A build step that downloads what it needs, as FetchContent would.
file(DOWNLOAD "{file_server}" "${{CMAKE_BINARY_DIR}}/planted.txt" STATUS status)
list(GET status 0 code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "file(DOWNLOAD {file_server}) failed: ${{status}}")
endif()
""")
    env = {"CMAKE_TOOLCHAIN_FILE": str(fetch)}
    # The server answers outside the sandbox: what stops the build is the sandbox.
    assert urllib.request.urlopen(file_server, timeout=30).read() == b"downloaded\n"

    sandboxed = build(kernel_builder, kernel, env=env)
    assert sandboxed.returncode != 0, sandboxed.stderr
    assert ("`cmake` failed with exit status 1 while building torch" in sandboxed.stderr
            and f'in the build sandbox: the build tried to reach the network ("{file_server}"), '
            "which the sandbox forbids (it has no network)" in sandboxed.stderr
            and "--no-sandbox" in sandboxed.stderr), sandboxed.stderr
    assert not [p for p in (kernel / "build").iterdir() if p.name.startswith("torch")]

    unsandboxed = build(kernel_builder, kernel, "--no-sandbox", env=env)
    assert unsandboxed.returncode == 0, unsandboxed.stderr
    assert "warning: building without the build sandbox (--no-sandbox)" in unsandboxed.stderr
    [variant] = json.loads(unsandboxed.stdout)["variants"]
    work = kernel / "build" / ".kernelhub" / variant["name"] / "cmake"
    assert (work / "planted.txt").read_text() == "downloaded\n"
    assert provenance(kernel)["sandboxed"] is False

    # The reference packages read the metadata (they ignore the key they do not know).
    check = run([PYTHON, "-c", f"""
import kernels_data, kernels._rust as rust
path = {str(Path(variant["path"]) / "metadata.json")!r}
kernels_data.Metadata.read_from_file(path)
print(rust.Metadata.read_from_file(path).provenance.kernel_builder.version)
"""])
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() != ""


def test_reading_outside_the_kernel_folder_fails_in_the_sandbox(kernel_builder, tmp_path):
    kernel = relu_cpu(tmp_path)
    outside = tmp_path / "elsewhere" / "outside.h"
    outside.parent.mkdir()
    outside.write_text("#define RELU_OUTSIDE_HEADER 1\n")
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    plain = source.read_text()
    source.write_text(f'#include "{outside}"\n' + plain)

    sandboxed = build(kernel_builder, kernel)
    assert sandboxed.returncode != 0, sandboxed.stderr
    assert ("`ninja` failed with exit status 1 while building torch" in sandboxed.stderr
            and f'in the build sandbox: the build tried to read "{outside}", outside its '
            "declared inputs" in sandboxed.stderr), sandboxed.stderr

    # KERNELHUB_NO_SANDBOX=1 is --no-sandbox.
    assert build(kernel_builder, kernel, env={"KERNELHUB_NO_SANDBOX": "1"}).returncode == 0
    assert provenance(kernel)["sandboxed"] is False

    # Back in the sandbox with the include gone: the tree built outside it is not reused, and
    # the provenance no longer says unsandboxed.
    source.write_text(plain)
    again = build(kernel_builder, kernel)
    assert again.returncode == 0, again.stderr
    assert "sandboxed" not in provenance(kernel)
    [variant] = json.loads(again.stdout)["variants"]
    work = kernel / "build" / ".kernelhub" / variant["name"] / "cmake"
    assert not (work / "kernelhub-unsandboxed").exists()


def test_a_machine_that_cannot_make_namespaces_is_told_to_use_no_sandbox(kernel_builder,
                                                                          tmp_path):
    kernel = relu_cpu(tmp_path)
    # A bwrap that fails as it does where user namespaces are disabled.
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    result = build(kernel_builder, kernel,
                   env={"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode != 0
    assert "bwrap: No permissions to create new namespace" in result.stderr
    assert (f'kernel-builder: error: bubblewrap ("{fake}") cannot create the build sandbox on '
            "this machine") in result.stderr, result.stderr
    assert "build without the sandbox with --no-sandbox" in result.stderr
    assert not list(kernel.glob("build/.kernelhub/*/cmake/build.ninja")), "nothing ran"


def test_upload_warns_about_variants_built_without_the_sandbox(kernel_builder, hub_server,
                                                               tmp_path):
    kernel = tmp_path / "relu"
    (kernel / "build").mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "relu"\nversion = 1\nbackends = ["cpu"]\nedition = 5\n'
        'license = "apache-2.0"\n\n[general.hub]\nrepo-id = "org/relu"\n\n[torch-noarch]\n')
    for name, sandboxed in (("torch-cpu", False), ("torch-cuda", True)):
        variant = kernel / "build" / name
        (variant / "relu").mkdir(parents=True)
        provenance = {"kernel-builder": {"version": "0.1.0"}}
        if not sandboxed:
            provenance["sandboxed"] = False
        (variant / "metadata.json").write_text(json.dumps({
            "name": "relu", "id": "_relu_sandbox_test", "version": 1, "license": "apache-2.0",
            "python-depends": [], "backend": {"type": name.split("-")[1]},
            "provenance": provenance}))
        (variant / "relu" / "__init__.py").write_text("VALUE = 1\n")
    env = hub_env(hub_server.url, tmp_path / "hf-cache")
    env["HF_TOKEN"] = hub_server.token
    result = run([kernel_builder, "upload", kernel, "--no-check"], env=env)
    assert result.returncode == 0, result.stderr
    assert ("warning: uploading 1 build variant(s) built without the build sandbox "
            "(--no-sandbox): torch-cpu\n") in result.stderr
