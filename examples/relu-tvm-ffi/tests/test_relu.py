"""relu_tvm_ffi against torch.relu, on the device of the variant under test.

`kernel-builder test` puts the built variant on the path as `relu_tvm_ffi`; its metadata.json
says which backend it was built for, so the same tests serve the cpu and cuda variants.
"""
import json
from pathlib import Path

import pytest
import torch

import relu_tvm_ffi

_DEVICES = {"cpu": "cpu", "cuda": "cuda"}


@pytest.fixture(scope="module")
def device() -> str:
    metadata = json.loads((Path(relu_tvm_ffi.__file__).parent / "metadata.json").read_text())
    return _DEVICES[metadata["backend"]["type"]]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("shape", [(1,), (7,), (33, 1000), (3, 5, 257)])
def test_matches_torch(device, shape):
    torch.manual_seed(0)
    x = torch.randn(shape, device=device)
    torch.testing.assert_close(relu_tvm_ffi.relu(x), torch.relu(x))


@pytest.mark.kernels_ci
def test_writes_into_out(device):
    x = torch.randn(64, device=device)
    out = torch.full_like(x, float("nan"))
    assert relu_tvm_ffi.relu(x, out) is out
    torch.testing.assert_close(out, torch.relu(x))


@pytest.mark.kernels_ci
def test_slices_with_offsets(device):
    x = torch.arange(-20, 20, device=device, dtype=torch.float32)
    for start in (1, 13, 39):
        out = torch.full_like(x, 42.0)
        relu_tvm_ffi.relu(x[start:], out[start:])
        torch.testing.assert_close(out[start:], torch.relu(x[start:]))
        assert bool((out[:start] == 42.0).all())


@pytest.mark.kernels_ci
def test_rejects_other_dtypes(device):
    x = torch.ones(4, device=device, dtype=torch.float64)
    with pytest.raises(TypeError, match="float32"):
        relu_tvm_ffi.relu(x, torch.empty_like(x))
