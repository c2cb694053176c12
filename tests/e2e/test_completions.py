# SPDX-License-Identifier: Apache-2.0
"""`completions bash|zsh|fish` in both programs (issue 13 item 13): scripts rendered from the
command tables. bash's is sourced in a plain, non-interactive bash and its function called with
COMP_WORDS/COMP_CWORD as readline would set them; fish's answers `complete -C`; zsh's parses."""
import json
import shutil
import subprocess

import pytest

from conftest import run


def script(program, shell):
    result = run([program, "completions", shell], check=True)
    assert result.stdout.strip()
    return result.stdout


def bash_complete(program, script_path, words):
    """The words bash's completion function offers for `words` (the last one is completed)."""
    function = "_" + program.name.replace("-", "_")
    quoted = " ".join("'" + w + "'" for w in words)
    code = (f"source '{script_path}'\n"
            f"complete -p {program.name}\n"
            f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
            f"{function}\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n')
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"complete -o default -F {function} {program.name}"
    return [line for line in lines[1:] if line]


def visible_commands(program):
    """Every visible command of the program, from the docs model (not from the script)."""
    model = json.loads(run([program, "generate-docs", "--json"], check=True).stdout)
    [entry] = [p for p in model["programs"] if p["path"] == program.name]
    return {sub["path"].split()[-1]: sub for sub in entry["commands"]}


@pytest.fixture
def bash_script(kernel_builder, tmp_path):
    path = tmp_path / "kernel-builder.bash"
    path.write_text(script(kernel_builder, "bash"))
    return path


def test_bash_completes_a_command_prefix(kernel_builder, bash_script):
    offered = bash_complete(kernel_builder, bash_script, ["kernel-builder", "bu"])
    assert sorted(offered) == ["build", "build-and-copy", "build-and-upload"]


def test_bash_completes_every_command_of_the_table(kernel_builder, bash_script):
    offered = bash_complete(kernel_builder, bash_script, ["kernel-builder", ""])
    assert set(offered) == set(visible_commands(kernel_builder))
    assert "completions" in offered and "generate-docs" not in offered  # hidden


def test_bash_completes_a_commands_options(kernel_builder, bash_script):
    offered = bash_complete(kernel_builder, bash_script, ["kernel-builder", "build", "--"])
    assert "--variant" in offered and "--abi-check" in offered and "--help" in offered
    # Every option the command declares, straight from the model.
    declared = {name for option in visible_commands(kernel_builder)["build"]["options"]
                for name in option["names"] if name.startswith("--")}
    assert declared <= set(offered)
    after_dir = bash_complete(kernel_builder, bash_script,
                              ["kernel-builder", "build", "some/dir", "--va"])
    assert after_dir == ["--variant"]


def test_bash_completes_allowed_values_and_leaves_paths_to_bash(kernel_builder, bash_script):
    offered = bash_complete(kernel_builder, bash_script,
                            ["kernel-builder", "build", "--abi-check", ""])
    assert sorted(offered) == ["error", "off", "warn"]
    # A free value or a positional: no words, so `complete -o default` completes file names.
    assert bash_complete(kernel_builder, bash_script,
                         ["kernel-builder", "build", "--python", ""]) == []
    assert bash_complete(kernel_builder, bash_script, ["kernel-builder", "build", ""]) == []


def test_kernelhub_bash_script_completes_its_own_commands(kernelhub_bin, tmp_path):
    path = tmp_path / "kernelhub.bash"
    path.write_text(script(kernelhub_bin, "bash"))
    offered = bash_complete(kernelhub_bin, path, ["kernelhub", "ver"])
    assert sorted(offered) == ["verify", "verify-signature", "versions"]
    options = bash_complete(kernelhub_bin, path, ["kernelhub", "verify", "--py"])
    assert options == ["--python"]


@pytest.mark.parametrize("program_fixture", ["kernel_builder", "kernelhub_bin"])
def test_zsh_script_parses(request, program_fixture, tmp_path):
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed (scripts/setup.sh installs it)")
    program = request.getfixturevalue(program_fixture)
    path = tmp_path / f"_{program.name}"
    text = script(program, "zsh")
    path.write_text(text)
    assert text.startswith(f"#compdef {program.name}\n")
    result = subprocess.run([zsh, "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for command in visible_commands(program):
        assert f"\n        {command})\n" in text


@pytest.mark.parametrize("program_fixture", ["kernel_builder", "kernelhub_bin"])
def test_fish_script_parses_and_completes(request, program_fixture, tmp_path):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed (scripts/setup.sh installs it)")
    program = request.getfixturevalue(program_fixture)
    path = tmp_path / f"{program.name}.fish"
    path.write_text(script(program, "fish"))
    parsed = subprocess.run([fish, "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert parsed.returncode == 0, parsed.stderr
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}

    def complete(line):
        result = subprocess.run([fish, "--no-config", "-c",
                                 f"source {path}; complete -C '{line}'"],
                                capture_output=True, text=True, timeout=60, env=env)
        assert result.returncode == 0, result.stderr
        return [entry.split("\t")[0] for entry in result.stdout.splitlines()]

    commands = complete(f"{program.name} ")
    assert set(visible_commands(program)) <= set(commands)
    if program.name == "kernel-builder":
        assert "--variant" in complete("kernel-builder build --")
        assert sorted(complete("kernel-builder build --abi-check ")) == ["error", "off", "warn"]
