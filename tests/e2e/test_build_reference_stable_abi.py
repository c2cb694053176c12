# SPDX-License-Identifier: Apache-2.0
"""The reference's example relu-torch-stable-abi (its own build.toml, our sources) builds with
the checks on (issue 13 item 4).

Its CUDA kernel includes torch/csrc/stable/tensor.h, whose shim lookup calls dlsym; glibc 2.34
moved dlsym into libc at GLIBC_2.34, beyond manylinux_2_28. The glibc pins (-include
compat/glibc_pins.h) used to reach only C++ compile lines, so nvcc's object kept the new
version and check-abi failed the build. One build (cpu, and cuda where nvcc is found), cached
by ccache across runs: conftest's `built_example`, shared with test_kernel_test_command.py.
"""
import json
import platform
import shutil

import pytest

from conftest import CORPUS_DIR, REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"
EXAMPLE = REPO_ROOT / "examples" / "relu-torch-stable-abi"
SYSTEM = f"{platform.machine()}-linux"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None
    or platform.system() != "Linux",
    reason="needs Linux and the .venv with torch, cmake and ninja",
)


def test_the_example_uses_the_reference_build_toml():
    ours = (EXAMPLE / "build.toml").read_text()
    reference = (CORPUS_DIR / "relu-torch-stable-abi.toml").read_text()
    assert ours.endswith(reference)


@pytest.fixture(scope="module")
def built(built_example):
    example = built_example(EXAMPLE.name)
    return example.kernel, example.result


def cuda_variants(kernel):
    return sorted(p for p in (kernel / "build").glob("torch-stable-abi211-cu*"))


def test_builds_with_the_checks_on(built):
    kernel, result = built
    assert result.returncode == 0, result.stderr
    assert "ABI violation" not in result.stderr
    assert "GLIBC_2.34" not in result.stderr
    names = [v["name"] for v in json.loads(result.stdout)["variants"]]
    assert f"torch-stable-abi211-cpu-{SYSTEM}" in names
    assert json.loads(result.stdout)["failed"] == []


def test_the_pins_reach_nvcc(built, kernel_builder):
    kernel, result = built
    assert result.returncode == 0, result.stderr
    variants = cuda_variants(kernel)
    if not variants:
        pytest.skip("no cuda variant was built here (no nvcc or no CUDA torch)")
    [variant] = variants
    compile_commands = json.loads(
        (kernel / "build" / ".kernelhub" / variant.name / "cmake" / "compile_commands.json")
        .read_text())
    [cuda] = [c for c in compile_commands if c["file"].endswith("relu_cuda/relu.cu")]
    assert "-include" in cuda["command"] and "glibc_pins.h" in cuda["command"]
    # The object nvcc made binds dlsym at a version manylinux_2_28 allows.
    checked = run([kernel_builder, "check-abi", variant, "--manylinux", "manylinux_2_28",
                   "--torch-stable-abi", "2.11"])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_its_tests_pass(built, kernel_builder):
    kernel, result = built
    assert result.returncode == 0, result.stderr
    tested = run([kernel_builder, "test", kernel, "--python", PYTHON])
    assert tested.returncode == 0, tested.stdout + tested.stderr
