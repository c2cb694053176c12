# SPDX-License-Identifier: Apache-2.0
"""Runs the `kernelhub` program (the CLI the reference's `kernels` CLI functions map to)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def kernelhub_program() -> str:
    beside = Path(sys.executable).parent / "kernelhub"
    if beside.exists():
        return str(beside)
    found = shutil.which("kernelhub")
    if found is None:
        raise FileNotFoundError("the kernelhub program is not installed (scripts/setup.sh)")
    return found


def run(*args: str, python: bool = False) -> subprocess.CompletedProcess:
    """`kernelhub ARGS`; with `python`, this interpreter decides the variant (--python)."""
    command = [kernelhub_program(), *args] + (["--python", sys.executable] if python else [])
    return subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=dict(os.environ))


def relay(result: subprocess.CompletedProcess) -> None:
    """Prints what the program printed; exits as it did when it failed (the reference's CLI
    functions call sys.exit on errors)."""
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        sys.exit(result.returncode)
