# SPDX-License-Identifier: Apache-2.0
"""Both executables answer --help and --version, and every command has --help."""
from conftest import run


def test_kernel_builder_version(kernel_builder):
    result = run([kernel_builder, "--version"], check=True)
    assert result.stdout.startswith("kernel-builder ")


def test_kernelhub_version_and_help(kernelhub_bin):
    assert run([kernelhub_bin, "--version"], check=True).stdout.startswith("kernelhub ")
    assert "Usage" in run([kernelhub_bin, "--help"], check=True).stdout


def test_every_builder_command_has_help(kernel_builder):
    for command in ["init", "update-build", "check-config", "list-variants"]:
        result = run([kernel_builder, command, "--help"], check=True)
        assert command in result.stdout, command


def test_unknown_command_fails(kernel_builder):
    result = run([kernel_builder, "no-such-command"])
    assert result.returncode != 0
