#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, end to end, as far as it goes today: create a kernel project for every
# backend and validate its build.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

kernel-builder init "$work/relu-demo" --name demo/relu-demo --backends all
kernel-builder check-config "$work/relu-demo"
kernel-builder list-variants "$work/relu-demo"
echo "demo: ok"
