#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/cli.md from the built binaries (`generate-docs` walks the command tables),
# so the CLI reference never drifts from the options the programs really declare.
# Binaries: $KERNELHUB_BIN_DIR if set, else the build tree ($KERNELHUB_BUILD_DIR, default
# build), else .venv/bin. Build first (scripts/setup.sh or ninja) so they are current.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=${KERNELHUB_BIN_DIR:-}
if [ -z "$bin_dir" ]; then
  build_dir=${KERNELHUB_BUILD_DIR:-build}
  if [ -x "$build_dir/src/kernelhub/cli/kernel-builder" ]; then
    bin_dir=$build_dir/src/kernelhub/cli
  else
    bin_dir=.venv/bin
  fi
fi
for program in kernel-builder kernelhub; do
  if [ ! -x "$bin_dir/$program" ]; then
    echo "update-docs: $bin_dir/$program not found; build it first (scripts/setup.sh)" >&2
    exit 1
  fi
done

"$bin_dir/kernel-builder" generate-docs --output docs/cli.md
# Both programs print the same reference; a difference means a stale binary.
if ! "$bin_dir/kernelhub" generate-docs | cmp -s - docs/cli.md; then
  echo "update-docs: kernelhub generate-docs differs from kernel-builder's; rebuild both" >&2
  exit 1
fi
echo "update-docs: wrote docs/cli.md from $bin_dir"
