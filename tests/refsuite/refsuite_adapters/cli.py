# SPDX-License-Identifier: Apache-2.0
"""`kernels.cli`: the `kernels` program's commands as functions.

- `download_kernels(args)`: `kernelhub download PROJECT [--all-variants]` (every locked kernel
  of the project's kernels.lock at its commit, publishers checked as `kernels lock` checks
  them; exit status 1 on failure, as the reference's `sys.exit(1)`).
"""
from __future__ import annotations

from ._cli import relay, run


def download_kernels(args) -> None:
    relay(run("download", str(args.project_dir),
              *(["--all-variants"] if args.all_variants else []), python=True))
