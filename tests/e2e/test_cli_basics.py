# SPDX-License-Identifier: Apache-2.0
"""Both executables answer --help and --version, and reject what they do not know.

Per-command --help is checked for every documented command in test_cli_help.py.
"""
import pytest

from conftest import run


def test_kernel_builder_version(kernel_builder):
    result = run([kernel_builder, "--version"], check=True)
    assert result.stdout.startswith("kernel-builder ")


def test_kernelhub_version_and_help(kernelhub_bin):
    assert run([kernelhub_bin, "--version"], check=True).stdout.startswith("kernelhub ")
    assert "Usage" in run([kernelhub_bin, "--help"], check=True).stdout


@pytest.mark.parametrize("program", ["kernel_builder", "kernelhub_bin"])
def test_no_arguments_prints_help(program, request):
    result = run([request.getfixturevalue(program)])
    assert result.returncode == 0
    assert "Usage" in result.stdout


@pytest.mark.parametrize("program", ["kernel_builder", "kernelhub_bin"])
def test_unknown_command_fails(program, request):
    result = run([request.getfixturevalue(program), "no-such-command"])
    assert result.returncode != 0
    assert "no-such-command" in result.stdout + result.stderr


@pytest.mark.parametrize("program, typo, meant", [("kernel_builder", "buld", "build"),
                                                  ("kernel_builder", "check-laod", "check-load"),
                                                  ("kernelhub_bin", "downlaod", "download")])
def test_a_mistyped_command_gets_did_you_mean(program, typo, meant, request):
    """issue 13 item 10: as build.toml errors do."""
    name = "kernel-builder" if program == "kernel_builder" else "kernelhub"
    result = run([request.getfixturevalue(program), typo, ".", "--json"])
    assert result.returncode == 2
    assert result.stderr == f'{name}: error: unknown command "{typo}"; did you mean "{meant}"?\n'
    unrelated = run([request.getfixturevalue(program), "xyzzy"])
    assert unrelated.returncode == 2
    assert unrelated.stderr == (f'{name}: error: unknown command "xyzzy"; `{name} --help` lists '
                                "the commands\n")


def test_unknown_option_fails(kernel_builder):
    result = run([kernel_builder, "--no-such-option"])
    assert result.returncode != 0
    assert "--no-such-option" in result.stdout + result.stderr
