# SPDX-License-Identifier: Apache-2.0
"""Every documented command answers --help, and its help lists every documented option.

The command list is not hard-coded: it comes from `generate-docs --json`, the same model
docs/cli.md is rendered from, so a new command is covered as soon as it is in a table.
"""
import json

import pytest

from conftest import _binary, run


def _commands():
    model = json.loads(run([_binary("kernel-builder"), "generate-docs", "--json"],
                           check=True).stdout)

    def walk(command):
        yield command
        for sub in command["commands"]:
            yield from walk(sub)

    return [command for program in model["programs"] for command in walk(program)]


COMMANDS = _commands()


def test_both_programs_are_covered():
    programs = {command["path"].split()[0] for command in COMMANDS}
    assert programs == {"kernel-builder", "kernelhub"}


@pytest.mark.parametrize("command", COMMANDS, ids=[c["path"] for c in COMMANDS])
def test_help_lists_every_documented_option(command):
    program, *words = command["path"].split()
    result = run([_binary(program), *words, "--help"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    help_text = result.stdout
    assert command["synopsis"] in help_text
    for option in command["options"]:
        for name in option["names"]:
            assert name in help_text, f"{command['path']}: {name} missing from --help"
    for positional in command["positionals"]:
        assert positional["names"][0] in help_text, command["path"]
    for sub in command["commands"]:
        assert sub["path"].split()[-1] in help_text, f"{sub['path']} missing from --help"


@pytest.mark.parametrize("command", [c for c in COMMANDS if c["commands"]],
                         ids=lambda c: c["path"])
def test_hidden_commands_stay_out_of_help(command):
    program, *words = command["path"].split()
    result = run([_binary(program), *words, "--help"], check=True)
    assert "generate-docs" not in result.stdout
