# SPDX-License-Identifier: Apache-2.0
"""The C++ API (include/kernelhub/kernelhub.hpp): examples/cpp/relu_side_by_side loads two
builds of examples/relu (different ids) into one C++ process without Python, calls relu through
the Torch dispatcher and compares with torch::relu.

The CMake route (KERNELHUB_BUILD_TORCH_API) is opt-in, so this test compiles the API and the
example with g++ against the venv's libtorch and the kh_* archives of a build tree
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
LAYERS = ["loader", "variants", "config", "metadata", "types", "util"]
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


def test_cpp_example_runs_two_builds_side_by_side(kernel_builder, tmp_path):
    a = build(kernel_builder, tmp_path / "relu-a", "cppa")
    b = build(kernel_builder, tmp_path / "relu-b", "cppb")
    includes = ["-I", REPO_ROOT / "include", "-I", REPO_ROOT / "src", "-I", TORCH / "include",
                "-I", TORCH / "include/torch/csrc/api/include"]
    archives = [BUILD / "src/kernelhub" / l / f"libkh_{l}.a" for l in LAYERS]
    torch_libs = ["-L", TORCH / "lib", "-ltorch", "-ltorch_cpu", "-lc10"]
    api = tmp_path / "libkernelhub_torch.so"
    subprocess.run(["g++", "-std=c++20", "-O1", "-fPIC", "-shared", *includes,
                    REPO_ROOT / "src/kernelhub/loader/torch/kernelhub_torch.cpp", "-o", api,
                    "-Wl,--whole-archive", archives[0], "-Wl,--no-whole-archive", *archives[1:],
                    *torch_libs, "-lfmt", "-lcrypto", "-ldl"], check=True)
    program = tmp_path / "relu_side_by_side"
    subprocess.run(["g++", "-std=c++20", "-O1", *includes,
                    REPO_ROOT / "examples/cpp/relu_side_by_side.cpp", "-o", program,
                    "-L", tmp_path, "-lkernelhub_torch", *torch_libs], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=f"{TORCH / 'lib'}:{tmp_path}")
    result = subprocess.run([program, a, b], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["_relu_cpu_cppa", "_relu_cpu_cppb"]
    assert all(line.endswith("matches torch::relu") for line in lines)
    # no Python in the process: the program does not link libpython
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True, env=env).stdout
    assert "libpython" not in ldd
