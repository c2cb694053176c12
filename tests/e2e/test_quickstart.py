# SPDX-License-Identifier: Apache-2.0
"""docs/quickstart.md stays true (issue 22 §9): its ten commands are read from the page and run
in order, in one shell in an empty folder, and each must succeed and print what the page shows.

The comparison is loose where a machine differs: numbers (times, sizes, the torch version in
variant names, the port) are compared as "a number", the page's /home/me stands for the folder
the commands run in, and the lines the page shows must appear in that order in what the command
printed (it may print more: the page keeps to the lines that matter). The page's port is
replaced by a free one, so the hub it starts never collides with another."""
import os
import re
import socket
import subprocess
from pathlib import Path

from conftest import REPO_ROOT, VENV_BIN

PAGE = REPO_ROOT / "docs" / "quickstart.md"
PAGE_HOME = "/home/me"
PAGE_PORT = "8765"
STEP = "@@quickstart-step@@"


def parse_steps(text: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) for each `$ ` line of the page's console
    blocks; a command with a here-document (`<<'EOF'`) runs to its terminator line."""
    steps = []
    lines = iter(text.splitlines())
    in_console = False
    for line in lines:
        if line.startswith("```"):
            in_console = line.strip() == "```console"
            continue
        if not in_console:
            continue
        if line.startswith("$ "):
            command = line[2:]
            heredoc = re.search(r"<<'?(\w+)'?", command)
            if heredoc:
                for body in lines:
                    command += "\n" + body
                    if body == heredoc.group(1):
                        break
            steps.append((command, []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def normalize(line: str, home: str) -> str:
    line = line.replace(home, PAGE_HOME)
    line = re.sub(r"\d+(\.\d+)?", "0", line)
    # pytest pads its summary line with '=' to a fixed width, so a run of 12.18 s has one '='
    # fewer than one of 4.79 s: rules of any length compare equal.
    line = re.sub(r"={3,}", "===", line)
    return " ".join(line.split())


def missing_lines(shown: list[str], printed: str, home: str) -> list[str]:
    """The lines of `shown` not found, in order, among the lines of `printed`."""
    actual = [normalize(line, home) for line in printed.splitlines()]
    position = 0
    missing = []
    for line in shown:
        wanted = normalize(line, home)
        if not wanted:
            continue
        try:
            position = actual.index(wanted, position) + 1
        except ValueError:
            missing.append(line)
    return missing


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def script_for(steps, port: str) -> str:
    """One bash script running every step, each one's output after a marker line with its
    number, each one's exit status after it; a step left in the background is waited for (its
    port open, under a deadline) and killed when the script ends."""
    parts = ["trap 'kill $(jobs -p) 2>/dev/null' EXIT"]
    for number, (command, _) in enumerate(steps):
        command = command.replace(PAGE_PORT, port)
        parts.append(f"echo '{STEP} {number}'")
        parts.append(f"{{\n{command}\n}} 2>&1")
        parts.append(f"echo \"{STEP} status $?\"")
        if command.rstrip().endswith("&"):
            parts.append(
                f"for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null "
                "&& break; sleep 0.1; done")
    return "\n".join(parts) + "\n"


def test_the_page_has_ten_commands_from_init_to_kernelize():
    commands = [command.split()[0:2] for command, _ in parse_steps(PAGE.read_text())]
    assert len(commands) == 10, commands
    assert commands[0] == ["kernel-builder", "init"]
    names = " ".join(command for command, _ in parse_steps(PAGE.read_text()))
    for needed in ("kernel-builder build", "kernel-builder test", "kernelhub serve",
                   "kernel-builder upload", "get_kernel(", "kernelize("):
        assert needed in names, needed


def test_parser_and_comparison():
    # The harness itself: here-documents stay with their command, and the comparison accepts
    # other numbers and extra lines but not a missing or reordered line.
    page = ("```console\n$ echo 1\n1\n$ python - <<'EOF'\nprint(2)\nEOF\n2\n```\n"
            "```sh\n$ not a step\n```\n")
    assert parse_steps(page) == [("echo 1", ["1"]), ("python - <<'EOF'\nprint(2)\nEOF", ["2"])]
    assert missing_lines(["took 1.5 s", "done"], "extra\ntook 27.25 s\ndone\n", "/x") == []
    assert missing_lines(["a", "b"], "b\na\n", "/x") == ["b"]
    assert missing_lines(["at /home/me/k"], "at /tmp/t/k\n", "/tmp/t") == []


def test_quickstart_runs_as_written(tmp_path):
    steps = parse_steps(PAGE.read_text())
    home = tmp_path / "me"
    home.mkdir()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("HF_", "HUGGING_FACE_", "KERNELHUB_")) and key != "LOCAL_KERNELS"}
    env.update({
        "PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        "HF_HOME": str(tmp_path / "hf-home"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        # Compiled objects are shared with other builds of the same sources (ccache).
        "CCACHE_BASEDIR": str(home),
    })
    result = subprocess.run(["bash", "-c", script_for(steps, free_port())], cwd=home, env=env,
                            capture_output=True, text=True, stdin=subprocess.DEVNULL,
                            timeout=1200)
    chunks = result.stdout.split(f"{STEP} ")[1:]
    outputs = {}
    for chunk in chunks:
        head, _, body = chunk.partition("\n")
        if head.startswith("status "):
            outputs[len(outputs) - 1] = (outputs[len(outputs) - 1][0], int(head.split()[1]))
        else:
            outputs[int(head)] = (body, None)
    assert len(outputs) == len(steps), f"stopped early:\n{result.stdout}\n{result.stderr}"
    for number, (command, shown) in enumerate(steps):
        printed, status = outputs[number]
        assert status == 0, f"step {number + 1} failed: {command}\n{printed}"
        missing = missing_lines(shown, printed, str(home))
        assert not missing, (f"step {number + 1}: {command}\nthe page shows lines it did not "
                             f"print: {missing}\nit printed:\n{printed}")
