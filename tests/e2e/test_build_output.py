# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build` prints what a person can follow (issue 13 item 11): a header per
variant and the checks as named steps with their time; CMake's and ninja's output (torch's
CMake warnings, `Added CUDA NVCC flags`, the libstdc++ note, every compile line) only when a
step fails, or with -v. One cpu build of examples/relu (cached by ccache across runs).
"""
import shutil

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"
TOOL_NOISE = ["-- Configuring done", "Building CXX object", "kineto", "object(s) of libstdc++.a"]

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja")


def cpu_relu(destination):
    shutil.copytree(REPO_ROOT / "examples" / "relu", destination,
                    ignore=shutil.ignore_patterns("build", "relu_cuda", "__pycache__"))
    toml = (destination / "build.toml").read_text()
    (destination / "build.toml").write_text(
        toml[:toml.index("# Two archs")].replace('["cpu", "cuda"]', '["cpu"]'))
    return destination


def build(kernel_builder, kernel, *args):
    return run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id", "quiet",
                *args], env={"CCACHE_BASEDIR": str(kernel)})


def test_a_build_shows_steps_not_tool_output(kernel_builder, tmp_path):
    kernel = cpu_relu(tmp_path / "relu")
    result = build(kernel_builder, kernel)
    assert result.returncode == 0, result.stderr
    for noise in TOOL_NOISE:
        assert noise not in result.stderr, noise
    assert "kernel-builder: building torch" in result.stderr
    assert "load check passed (" in result.stderr
    verbose = build(kernel_builder, kernel, "-v")
    assert verbose.returncode == 0, verbose.stderr
    assert "ninja" in verbose.stderr  # the tools' own lines, as they run


def test_a_failing_step_shows_the_tools_output(kernel_builder, tmp_path):
    kernel = cpu_relu(tmp_path / "relu")
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text() + "\nint broken = not_declared_anywhere;\n")
    result = build(kernel_builder, kernel)
    assert result.returncode != 0
    assert "not_declared_anywhere" in result.stderr  # the compiler's error, kept until now
    assert "failed with exit status" in result.stderr
