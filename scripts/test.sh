#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test: sets up what is missing, then the C++ unit tests (ctest) and the
# end-to-end and differential tests against the reference packages (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir=${KERNELHUB_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
export PATH="$PWD/.venv/bin:$PATH"
# --durations: the slowest tests in every log, where CI time goes (it should stay under 40 min).
# Two worker processes (KERNELHUB_TEST_WORKERS; 0 runs them in this process), each taking whole
# files, so a file's module fixtures are made once; session fixtures (built_example) are made
# once per worker, the second build of an example a ccache hit. The longest files first
# (tests/e2e/file_times.py), not xdist's most-tests-first, so the workers finish together.
workers=${KERNELHUB_TEST_WORKERS:-2}
parallel=()
[ "$workers" = 0 ] || parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)
.venv/bin/python -m pytest -q --durations=40 "${parallel[@]}" tests/e2e
