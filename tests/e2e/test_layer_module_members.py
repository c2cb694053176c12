# SPDX-License-Identifier: Apache-2.0
"""Issue 21 §1: kernelize once `nn.Module` has gained a member since the first validation.

transformers adds `nn.Module.smart_apply` when it builds its first model. The reference reads
`nn.Module`'s members on every layer validation; kernelhub once cached them at the first call,
so a process that kernelized anything before building a transformers model could never
kernelize one afterwards ("must not contain additional members compared to LlamaRMSNorm").
layer_members_client.py runs the same steps under both packages, each in a fresh interpreter,
with a hand-made local kernel whose RMSNorm layer computes what LlamaRMSNorm computes."""
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import VENV_BIN

PYTHON = VENV_BIN / "python"
CLIENT = Path(__file__).resolve().with_name("layer_members_client.py")


def _has(module: str) -> bool:
    if not PYTHON.exists():
        return False
    probe = subprocess.run([str(PYTHON), "-c", f"import importlib.util as u; "
                            f"print(u.find_spec('{module}') is not None)"],
                           capture_output=True, text=True)
    return probe.stdout.strip() == "True"


pytestmark = pytest.mark.skipif(not (_has("transformers") and _has("kernels")),
                                reason="needs the .venv with transformers and kernels 0.17.2")


def make_kernel(root: Path) -> Path:
    variant = root / "knorm" / "build" / "torch-universal"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps({
        "name": "knorm", "id": "_knorm_members", "version": 1, "license": "apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text("from . import layers\n")
    (variant / "layers.py").write_text(textwrap.dedent("""\
        import torch
        from torch import nn


        class RMSNorm(nn.Module):
            def forward(self, hidden_states):
                dtype = hidden_states.dtype
                x = hidden_states.to(torch.float32)
                x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
                return self.weight * x.to(dtype)


        class Double(nn.Module):
            def forward(self, x):
                return x * 2
    """))
    return root / "knorm"


def run_client(package: str, kernel: Path, tmp_path: Path) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf-home"))
    env.pop("LOCAL_KERNELS", None)
    env.pop("DISABLE_KERNEL_MAPPING", None)
    result = subprocess.run([str(PYTHON), str(CLIENT), package, str(kernel)], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_kernelize_after_transformers_adds_a_module_member(tmp_path):
    kernel = make_kernel(tmp_path)
    reference = run_client("kernels", kernel, tmp_path)
    ours = run_client("kernelhub", kernel, tmp_path)
    # The premise: transformers did add a member to nn.Module after the first kernelize.
    assert "smart_apply" in reference["added"] and "smart_apply" in ours["added"]
    assert reference["outcome"] == "ok", reference
    assert ours == reference
    assert ours["first"] == [2.0, 2.0]
    assert ours["kernel_forwards"] == ["RMSNorm.forward"] * ours["norms"]
    assert ours["norms"] == 5
    assert ours["max_abs_diff"] < 1e-5
