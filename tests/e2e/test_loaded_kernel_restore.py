# SPDX-License-Identifier: Apache-2.0
"""A forgotten loaded kernel put back with `restore_loaded_kernel` (the reference suite's
registry fixture does this through tests/refsuite/refsuite_adapters) is listed again with its
module. It broke when the registry started taking a resolved module instead of a folder: the
restore still passed the folder (TypeError from registry_add)."""
import json
import subprocess

from conftest import VENV_BIN


def test_a_forgotten_kernel_is_restored_with_its_module(built_example):
    kernel = built_example("relu", backends=["cpu"])
    kernel.summary  # the build must have succeeded
    script = f"""
import json, pathlib
import kernelhub
from kernelhub._loader import forget_loaded_kernel, loaded_kernels, restore_loaded_kernel
module = kernelhub.get_local_kernel(pathlib.Path({str(kernel.kernel)!r}), backend="cpu")
[record] = loaded_kernels()
assert forget_loaded_kernel(record.variant_path)
assert loaded_kernels() == []
restore_loaded_kernel(record.variant_path, record)
[again] = loaded_kernels()
print(json.dumps({{"same": again.module is module, "name": again.metadata.name.python_name}}))
"""
    result = subprocess.run([str(VENV_BIN / "python"), "-c", script], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"same": True, "name": "relu"}
