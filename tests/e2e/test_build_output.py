# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build` prints what a person can follow (issue 13 item 11): a header per
variant and the checks as named steps with their time; CMake's and ninja's output (torch's
CMake warnings, `Added CUDA NVCC flags`, the libstdc++ note, every compile line) only when a
step fails, or with -v. One cpu build of examples/relu (cached by ccache across runs).

On a terminal (a pseudo-terminal here) ninja's steps show as one rewritten progress line naming
the variant's backend, `[cpu 1/3] relu_cpu/relu_cpu.cpp`; without one, plain lines only.
"""
import os
import pty
import re
import select
import shutil
import subprocess
import time

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


def on_terminal(argv, env, timeout=600):
    """Runs argv with stdout and stderr on a pseudo-terminal: (exit status, what it wrote)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL,
                               stdout=terminal, stderr=terminal, env=dict(os.environ, **env))
    os.close(terminal)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(controller, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    else:
        process.kill()
    os.close(controller)
    return process.wait(timeout=60), b"".join(chunks).decode(errors="replace")


SOURCE_CHECK_STEPS = [re.compile(rf"kernel-builder: {name} passed \(\d+\.\d s\)")
                      for name in ("check-layout", "check-ops", "check-imports")]


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


def test_a_terminal_gets_one_progress_line_naming_the_backend(kernel_builder, tmp_path):
    kernel = cpu_relu(tmp_path / "relu")
    status, text = on_terminal([kernel_builder, "build", kernel, "--python", PYTHON,
                                "--unique-id", "quiet"], {"CCACHE_BASEDIR": str(kernel)})
    assert status == 0, text
    # Each step rewrites the line ("\r", erase): the backend, the count, the source.
    assert re.search(r"\r\x1b\[K\[cpu \d+/\d+\] relu_cpu/relu_cpu\.cpp", text), text
    assert re.search(r"\r\x1b\[K\[cpu \d+/\d+\] .*torch_binding\.cpp", text), text
    for noise in TOOL_NOISE:
        assert noise not in text, noise
    for step in SOURCE_CHECK_STEPS:
        assert step.search(text), text


def test_without_a_terminal_plain_lines_and_timed_source_checks(kernel_builder, tmp_path):
    kernel = cpu_relu(tmp_path / "relu")
    result = build(kernel_builder, kernel)
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr and "\x1b[" not in result.stderr
    assert "[cpu " not in result.stderr  # no progress lines at all
    lines = result.stderr.splitlines()
    for step in SOURCE_CHECK_STEPS:
        assert any(step.fullmatch(line) for line in lines), result.stderr
    # The source checks run before anything is built.
    building = next(i for i, line in enumerate(lines) if "kernel-builder: building" in line)
    assert all(any(step.fullmatch(line) for line in lines[:building])
               for step in SOURCE_CHECK_STEPS), result.stderr


def test_a_source_check_that_finds_problems_says_so_with_its_time(kernel_builder, tmp_path):
    kernel = cpu_relu(tmp_path / "relu")
    binding = kernel / "torch-ext" / "torch_binding.cpp"
    binding.write_text(binding.read_text().replace("TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME",
                                                   "TORCH_LIBRARY(relu"))
    result = build(kernel_builder, kernel)
    assert result.returncode != 0
    assert re.search(r"kernel-builder: check-ops found 1 problem \(\d+\.\d s\)",
                     result.stderr), result.stderr
    assert re.search(r"kernel-builder: check-layout passed \(", result.stderr), result.stderr
