# SPDX-License-Identifier: Apache-2.0
"""`kernels.cli.info`: `print_kernel_info` is `kernelhub info KERNEL [--revision R |
--version N] [--json]` (a Hub repository or a local kernel folder)."""
from __future__ import annotations

import sys

from ._cli import relay, run


def print_kernel_info(kernel: str, *, revision: str | None = None, version: int | None = None,
                      json_output: bool = False) -> None:
    args = ["info", kernel]
    if revision is not None:
        args += ["--revision", revision]
    if version is not None:
        args += ["--version", str(version)]
    if json_output:
        args.append("--json")
    result = run(*args)
    if result.returncode != 0 and not result.stderr:
        print(f"kernelhub info failed with status {result.returncode}", file=sys.stderr)
    relay(result)
