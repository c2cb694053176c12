# SPDX-License-Identifier: Apache-2.0
"""Bad local input to every program (issue 12, items 12 and 13).

 12  a TOML file with one dotted key of 50,000 parts is refused with a located error
     (file:line:col) by check-config (build.toml), serve (config.toml) and lock
     (pyproject.toml), instead of a SIGSEGV inside toml++
 13  check-config refuses a build.toml that is a FIFO or a link to /dev/zero, check-abi a
     library that is a FIFO, without hanging; `kernel-builder hash` names a special file in a
     variant instead of leaving it out of the digest

Every run has a timeout (a hang fails the test) and an address-space limit (a program that
reads /dev/zero for ever fails fast instead of taking the machine's memory)."""
import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

TIMEOUT = 30
ADDRESS_SPACE = 2 << 30
DEEP_KEY = ".".join(["k"] * 50000)


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_bounded(args, **kwargs) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=TIMEOUT, preexec_fn=limited,
                              **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{[str(a) for a in args]} did not finish in {TIMEOUT} s (a hang)")


def assert_refused_without_crash(result: subprocess.CompletedProcess) -> None:
    assert result.returncode > 0, (
        f"exit status {result.returncode}"
        f"{' (' + signal.Signals(-result.returncode).name + ')' if result.returncode < 0 else ''}"
        f"\n{result.stderr[-2000:]}")


def test_check_config_refuses_a_50000_part_key_with_its_location(kernel_builder, tmp_path):
    (tmp_path / "build.toml").write_text(
        f'[general]\nname = "relu"\n{DEEP_KEY} = 1\n')
    result = run_bounded([kernel_builder, "check-config", tmp_path])
    assert_refused_without_crash(result)
    assert f"{tmp_path / 'build.toml'}:3:1" in result.stderr, result.stderr[-2000:]


def test_serve_refuses_a_config_toml_with_a_50000_part_key(kernelhub_bin, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "config.toml").write_text(f"[organizations.x]\n{DEEP_KEY} = true\n")
    result = run_bounded([kernelhub_bin, "serve", "--root", root, "--port", "0"])
    assert_refused_without_crash(result)
    assert f"{root / 'config.toml'}:2:1" in result.stderr, result.stderr[-2000:]


def test_lock_refuses_a_pyproject_with_a_50000_part_key(kernelhub_bin, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.kernels.dependencies]\n  {DEEP_KEY} = 1\n')
    env = dict(os.environ, HF_ENDPOINT="http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    result = run_bounded([kernelhub_bin, "lock", tmp_path], env=env)
    assert_refused_without_crash(result)
    assert f"{tmp_path / 'pyproject.toml'}:5:3" in result.stderr, result.stderr[-2000:]


def test_check_config_refuses_a_fifo_without_hanging(kernel_builder, tmp_path):
    os.mkfifo(tmp_path / "build.toml")
    result = run_bounded([kernel_builder, "check-config", tmp_path])
    assert_refused_without_crash(result)
    assert "FIFO" in result.stderr, result.stderr


def test_check_config_refuses_a_link_to_dev_zero(kernel_builder, tmp_path):
    (tmp_path / "build.toml").symlink_to("/dev/zero")
    result = run_bounded([kernel_builder, "check-config", tmp_path])
    assert_refused_without_crash(result)
    assert "character device" in result.stderr, result.stderr


def test_check_abi_refuses_a_fifo_without_hanging(kernel_builder, tmp_path):
    fifo = tmp_path / "_ops.abi3.so"
    os.mkfifo(fifo)
    result = run_bounded([kernel_builder, "check-abi", fifo])
    assert_refused_without_crash(result)
    assert "FIFO" in result.stderr + result.stdout, result.stderr


def test_hash_names_a_special_file_instead_of_leaving_it_out(kernel_builder, tmp_path):
    variant = tmp_path / "torch-cpu"
    variant.mkdir()
    (variant / "metadata.json").write_text('{"version": 1, "python-depends": []}')
    (variant / "__init__.py").write_text("x = 1\n")
    os.mkfifo(variant / "pipe")
    result = run_bounded([kernel_builder, "hash", variant])
    assert_refused_without_crash(result)
    assert "pipe" in result.stderr and "FIFO" in result.stderr, result.stderr
