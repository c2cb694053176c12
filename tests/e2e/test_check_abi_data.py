# SPDX-License-Identifier: Apache-2.0
"""data/abi/ is what scripts/generate_abi_data.py makes from the installed primary sources:
auditwheel's policy, CPython's stable ABI list (through abi3info) and torch's headers."""
import subprocess
import sys

import pytest

from conftest import REPO_ROOT


def test_abi_data_is_up_to_date():
    for module in ["auditwheel", "abi3info", "torch", "elftools"]:
        pytest.importorskip(module, reason=f"the generator needs {module}")
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "generate_abi_data.py"), "--check"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
