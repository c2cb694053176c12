"""The relu example against torch.relu, on the device of the variant under test.

`kernel-builder test` puts the built variant on the path as `relu`; its metadata.json says
which backend it was built for, so the same tests serve the cpu and cuda variants.
"""
import json
from pathlib import Path

import pytest
import torch

import relu as relu_package
from relu import relu

_DEVICES = {"cpu": "cpu", "cuda": "cuda", "rocm": "cuda", "xpu": "xpu", "metal": "mps"}


@pytest.fixture(scope="module")
def device() -> str:
    metadata = json.loads((Path(relu_package.__file__).parent / "metadata.json").read_text())
    return _DEVICES[metadata["backend"]["type"]]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("shape", [(1,), (7,), (33, 1000), (3, 5, 257)])
def test_matches_torch(device, shape):
    torch.manual_seed(0)
    x = torch.randn(shape, device=device)
    torch.testing.assert_close(relu(x), torch.relu(x))


@pytest.mark.kernels_ci
def test_writes_into_out(device):
    x = torch.randn(64, device=device)
    out = torch.full_like(x, float("nan"))
    assert relu(x, out=out) is out
    torch.testing.assert_close(out, torch.relu(x))


@pytest.mark.kernels_ci
def test_empty_input(device):
    assert relu(torch.empty(0, 3, device=device)).shape == (0, 3)
