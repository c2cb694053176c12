# SPDX-License-Identifier: Apache-2.0
"""docs/cli.md is exactly what the binaries generate from their command tables."""
import difflib
import json

import pytest

from conftest import REPO_ROOT, run

CLI_MD = REPO_ROOT / "docs" / "cli.md"
FIX = "docs/cli.md is stale: run scripts/update-docs.sh and commit the result"


def _diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        "docs/cli.md", "generate-docs", n=1,
    )
    return "".join(list(lines)[:60])


@pytest.mark.parametrize("program", ["kernel_builder", "kernelhub_bin"])
def test_generated_reference_matches_docs(program, request):
    binary = request.getfixturevalue(program)
    generated = run([binary, "generate-docs"], check=True).stdout
    committed = CLI_MD.read_text(encoding="utf-8")
    assert generated == committed, f"{FIX}\n{_diff(committed, generated)}"


def test_output_flag_writes_the_same_bytes(kernel_builder, tmp_path):
    target = tmp_path / "cli.md"
    run([kernel_builder, "generate-docs", "--output", target], check=True)
    printed = run([kernel_builder, "generate-docs"], check=True).stdout
    assert target.read_text(encoding="utf-8") == printed


def test_json_and_markdown_describe_the_same_commands(kernel_builder):
    model = json.loads(run([kernel_builder, "generate-docs", "--json"], check=True).stdout)
    markdown = run([kernel_builder, "generate-docs"], check=True).stdout

    def walk(command):
        yield command
        for sub in command["commands"]:
            yield from walk(sub)

    paths = [c["path"] for p in model["programs"] for c in walk(p)]
    assert [p["path"] for p in model["programs"]] == ["kernel-builder", "kernelhub"]
    headings = [line.split("`")[1] for line in markdown.splitlines()
                if line.startswith("#") and "`" in line]
    assert headings == paths


def test_hidden_commands_are_not_documented(kernel_builder):
    markdown = run([kernel_builder, "generate-docs"], check=True).stdout
    for program in ("kernel-builder", "kernelhub"):
        assert f"# `{program} generate-docs`" not in markdown  # no section
        assert f"[`{program} generate-docs`]" not in markdown  # no index entry
    # ...but they still run and still answer --help.
    assert run([kernel_builder, "generate-docs", "--help"]).returncode == 0
