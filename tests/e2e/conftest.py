# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures for the end-to-end tests: the installed binaries and the repo's paths."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus" / "build-toml"
VENV_BIN = REPO_ROOT / ".venv" / "bin"


def _binary(name: str) -> Path:
    # KERNELHUB_BIN_DIR points the tests at a build tree instead of the installed binaries.
    override = os.environ.get("KERNELHUB_BIN_DIR")
    path = Path(override) / name if override else VENV_BIN / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            pytest.fail(f"{name} is not installed; run scripts/setup.sh")
        path = Path(found)
    return path


@pytest.fixture(scope="session")
def kernel_builder() -> Path:
    return _binary("kernel-builder")


@pytest.fixture(scope="session")
def kernelhub_bin() -> Path:
    return _binary("kernelhub")


def run(args, *, cwd=None, check=False, env=None):
    """Runs a command and returns the CompletedProcess with text output."""
    merged = dict(os.environ)
    if env:
        merged.update(env)
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=merged, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=600,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{args} failed with {result.returncode}\nstdout:\n{result.stdout}\n"
            f"stderr:\n{result.stderr}"
        )
    return result


@pytest.fixture(scope="session")
def testtool() -> Path:
    """kernelhub-testtool (tests/tools): runs library functions for the differential tests.

    Found via KERNELHUB_TESTTOOL, else beside KERNELHUB_BIN_DIR's build tree (whose cli dir is
    <build>/src/kernelhub/cli), else in KERNELHUB_BUILD_DIR (default build/).
    """
    candidates = [os.environ.get("KERNELHUB_TESTTOOL")]
    if os.environ.get("KERNELHUB_BIN_DIR"):
        build = Path(os.environ["KERNELHUB_BIN_DIR"]).parents[2]
        candidates.append(build / "tests" / "tools" / "kernelhub-testtool")
    # scripts/test.sh builds into KERNELHUB_BUILD_DIR (default build/).
    build_dir = Path(os.environ.get("KERNELHUB_BUILD_DIR", "build"))
    candidates.append((REPO_ROOT / build_dir) / "tests" / "tools" / "kernelhub-testtool")
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return Path(candidate)
    pytest.fail("kernelhub-testtool not found; set KERNELHUB_TESTTOOL or build the tests")
