"""The stable-ABI relu example against torch.relu.

`kernel-builder test` puts the built variant on the path as `relu_stable_abi`.
"""
import pytest
import torch

from relu_stable_abi import relu


@pytest.mark.kernels_ci
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1,), (7,), (33, 1000), (3, 5, 257)])
def test_matches_torch(shape, dtype):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype)
    torch.testing.assert_close(relu(x), torch.relu(x))


@pytest.mark.kernels_ci
def test_writes_into_out():
    x = torch.randn(64)
    out = torch.full_like(x, float("nan"))
    assert relu(x, out=out) is out
    torch.testing.assert_close(out, torch.relu(x))


@pytest.mark.kernels_ci
def test_rejects_integer_tensors():
    with pytest.raises(RuntimeError, match="only float32 and float64"):
        relu(torch.arange(4))
