# SPDX-License-Identifier: Apache-2.0
"""The GPU checks (scripts/gpu-checks.sh, docs/gpu-checks.md) as a test: run where torch sees a
GPU, skipped with the reason everywhere else (CI has none). On a lent GPU machine the script
is run directly, from the wheels it installs; this test runs it with the .venv."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, VENV_BIN

PYTHON = VENV_BIN / "python"


def gpu_present() -> bool:
    if not PYTHON.exists():
        return False
    probe = subprocess.run([PYTHON, "-c", "import torch; print(torch.cuda.is_available())"],
                           capture_output=True, text=True)
    return probe.stdout.strip() == "True"


def test_the_gpu_checks_script_describes_itself():
    result = subprocess.run(["bash", REPO_ROOT / "scripts" / "gpu-checks.sh", "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for check in ("build", "check-abi", "test", "hub", "kernelize", "cpp", "timing"):
        assert f"#   - {check}" in result.stdout, check
    assert "--prepare" in result.stdout and "--wheels" in result.stdout


def test_every_gpu_check_passes(tmp_path):
    # Asked here, not at collection: the question imports torch (a second or two).
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    if not gpu_present():
        pytest.skip("torch in the .venv sees no GPU")
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(["bash", REPO_ROOT / "scripts" / "gpu-checks.sh", "--python", PYTHON,
                             "--out", tmp_path], capture_output=True, text=True, env=env,
                            timeout=1200)
    summary = json.loads((tmp_path / "gpu-checks.json").read_text())
    failed = [check["check"] for check in summary["checks"] if check["status"] != "pass"
              and "(information)" not in check["check"]]
    assert result.returncode == 0 and not failed, (failed, result.stdout[-3000:])
