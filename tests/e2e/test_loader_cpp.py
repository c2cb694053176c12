# SPDX-License-Identifier: Apache-2.0
"""The C++ API (include/kernelhub/kernelhub.hpp): examples/cpp/relu_side_by_side loads two
builds of examples/relu (different ids) into one C++ process without Python, and
examples/cpp/relu_from_hub loads relu from `kernelhub serve` (uploaded by `kernel-builder
upload`) with kernelhub::get_kernel; both call relu through the Torch dispatcher and compare
with torch::relu.

examples/cpp/CMakeLists.txt builds the same programs with find_package(Torch) (scripts/demo.sh
uses it); configuring it compiles the core again, so this test compiles the API and the
examples with g++ against the venv's libtorch and the kh_* archives of a build tree
(KERNELHUB_BUILD_DIR, default build/); it skips when those archives are missing.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", REPO_ROOT / "build"))
LAYERS = ["loader", "verify", "cache", "hub", "variants", "config", "metadata", "types", "util"]
TORCH = next(iter((REPO_ROOT / ".venv" / "lib").glob("python3*/site-packages/torch")), None)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        TORCH is None or shutil.which("g++") is None
        or not all((BUILD / "src/kernelhub" / l / f"libkh_{l}.a").exists() for l in LAYERS),
        reason="needs the venv's torch, g++ and the kh_* archives of a build tree"),
]


def build(kernel_builder, dest: Path, unique_id: str) -> Path:
    shutil.copytree(REPO_ROOT / "examples" / "relu", dest, ignore=shutil.ignore_patterns("build"))
    toml = dest / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    run([kernel_builder, "build", dest, "--python", PYTHON, "--unique-id", unique_id,
         "--skip-checks"], check=True)
    return dest


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """libkernelhub_torch.so and the two example programs, compiled once."""
    out = tmp_path_factory.mktemp("cpp")
    includes = ["-I", REPO_ROOT / "include", "-I", REPO_ROOT / "src", "-I", TORCH / "include",
                "-I", TORCH / "include/torch/csrc/api/include"]
    archives = [BUILD / "src/kernelhub" / l / f"libkh_{l}.a" for l in LAYERS]
    torch_libs = ["-L", TORCH / "lib", "-ltorch", "-ltorch_cpu", "-lc10"]
    api = out / "libkernelhub_torch.so"
    subprocess.run(["g++", "-std=c++20", "-O1", "-fPIC", "-shared", *includes,
                    REPO_ROOT / "src/kernelhub/loader/torch/kernelhub_torch.cpp", "-o", api,
                    "-Wl,--whole-archive", archives[0], "-Wl,--no-whole-archive", *archives[1:],
                    *torch_libs, "-lcurl", "-ltomlplusplus", "-lfmt", "-lcrypto", "-ldl"],
                   check=True)
    for name in ("relu_side_by_side", "relu_from_hub"):
        subprocess.run(["g++", "-std=c++20", "-O1", *includes,
                        REPO_ROOT / "examples/cpp" / f"{name}.cpp", "-o", out / name,
                        "-L", out, "-lkernelhub_torch", *torch_libs], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=f"{TORCH / 'lib'}:{out}")
    return out, env


def test_cpp_example_runs_two_builds_side_by_side(kernel_builder, programs, tmp_path):
    out, env = programs
    a = build(kernel_builder, tmp_path / "relu-a", "cppa")
    b = build(kernel_builder, tmp_path / "relu-b", "cppb")
    program = out / "relu_side_by_side"
    result = subprocess.run([program, a, b], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["_relu_cpu_cppa", "_relu_cpu_cppb"]
    assert all(line.endswith("matches torch::relu") for line in lines)
    # no Python in the process: the program does not link libpython
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True, env=env).stdout
    assert "libpython" not in ldd


def test_cpp_get_kernel_loads_from_kernelhub_serve(kernel_builder, kernelhub_bin, programs,
                                                   tmp_path):
    out, env = programs
    kernel = build(kernel_builder, tmp_path / "relu", "cpphub")
    root = tmp_path / "root"
    root.mkdir()
    (root / "config.toml").write_text("[organizations.cpp]\ntrustedKernelPublisher = true\n")
    (tmp_path / "tokens").write_text("cpp-token\n")
    server = subprocess.Popen([str(kernelhub_bin), "serve", "--root", str(root), "--port", "0",
                               "--token-file", str(tmp_path / "tokens")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        hub_env = dict(env, HF_ENDPOINT=url, HF_HOME=str(tmp_path / "home"),
                       HF_HUB_CACHE=str(tmp_path / "cache"), NO_PROXY="127.0.0.1,localhost")
        hub_env.pop("HF_HUB_OFFLINE", None)
        run([kernel_builder, "upload", kernel, "--repo-id", "cpp/relu", "--branch", "v1"],
            env=dict(hub_env, HF_TOKEN="cpp-token"), check=True)
        result = subprocess.run([out / "relu_from_hub", "cpp/relu", "1"], capture_output=True,
                                text=True, env=hub_env, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith("_relu_cpu_cpphub ")
        assert result.stdout.strip().endswith("matches torch::relu")
        assert list((tmp_path / "cache" / "kernels--cpp--relu" / "snapshots").iterdir())
        # An unknown version: the reference's error, from C++.
        missing = subprocess.run([out / "relu_from_hub", "cpp/relu", "7"], capture_output=True,
                                 text=True, env=hub_env, timeout=300)
        assert missing.returncode == 1
        assert "Version 7 not found, available versions: 1" in missing.stderr
        # KERNELHUB_REQUIRE_SIGNATURE (issue 14): the unsigned upload is refused before its
        # library is opened (LD_DEBUG lists every file the dynamic loader opens).
        refused = subprocess.run([out / "relu_from_hub", "cpp/relu", "1"], capture_output=True,
                                 text=True, timeout=300,
                                 env=dict(hub_env, KERNELHUB_REQUIRE_SIGNATURE="1",
                                          LD_DEBUG="files"))
        assert refused.returncode == 1
        assert "(signature required): signature not found" in refused.stderr
        assert "_relu_cpu_cpphub" not in refused.stderr
        opened = [line for line in refused.stderr.splitlines() if "file=" in line]
        assert opened and not any("/build/torch" in line for line in opened), opened
    finally:
        server.terminate()
        server.wait(timeout=10)
