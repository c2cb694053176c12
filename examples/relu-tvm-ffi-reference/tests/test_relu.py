# SPDX-License-Identifier: Apache-2.0
"""relu_tvm_ffi on the device of the variant under test, against torch.relu and numpy.

`kernel-builder test` puts the built variant on the path as `relu_tvm_ffi`; its metadata.json
names the backend, so one set of tests serves every variant.
"""
import json
from pathlib import Path

import pytest
import torch

import relu_tvm_ffi

_DEVICES = {"cpu": "cpu", "cuda": "cuda", "xpu": "xpu"}


@pytest.fixture(scope="module")
def device() -> str:
    metadata = json.loads((Path(relu_tvm_ffi.__file__).parent / "metadata.json").read_text())
    return _DEVICES[metadata["backend"]["type"]]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("shape", [(1,), (5,), (512, 300), (2, 3, 129)])
def test_matches_torch(device, shape):
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(shape, generator=generator).to(device)
    out = torch.full_like(x, float("nan"))
    assert relu_tvm_ffi.relu(x, out) is out
    torch.testing.assert_close(out, torch.relu(x), rtol=0, atol=0)


@pytest.mark.kernels_ci
def test_views_write_only_their_elements(device):
    x = torch.linspace(-3, 3, 50, device=device)
    for start in (0, 1, 17, 49):
        out = torch.full_like(x, 7.0)
        relu_tvm_ffi.relu(x[start:], out[start:])
        expected = torch.full_like(x, 7.0)
        expected[start:] = torch.relu(x[start:])
        torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.kernels_ci
def test_layer(device):
    x = torch.randn(64, 33, device=device)
    torch.testing.assert_close(relu_tvm_ffi.layers.ReLU()(x), torch.relu(x), rtol=0, atol=0)


@pytest.mark.kernels_ci
def test_numpy_arrays(device):
    if device != "cpu":
        pytest.skip("numpy arrays live on the CPU")
    np = pytest.importorskip("numpy")
    x = np.linspace(-2, 2, 41, dtype=np.float32)
    out = np.full_like(x, 9.0)
    relu_tvm_ffi.relu(x[3:], out[3:])
    np.testing.assert_array_equal(out[:3], np.full(3, 9.0, dtype=np.float32))
    np.testing.assert_array_equal(out[3:], np.maximum(x[3:], 0))


@pytest.mark.kernels_ci
def test_bad_arguments_are_named(device):
    x = torch.ones(4, device=device, dtype=torch.float64)
    with pytest.raises(TypeError, match="float32 only"):
        relu_tvm_ffi.relu(x, torch.empty_like(x))
    y = torch.ones(4, device=device)
    with pytest.raises(ValueError, match="4 elements, out has 3"):
        relu_tvm_ffi.relu(y, torch.empty(3, device=device))


@pytest.mark.kernels_ci
def test_relu_jax_needs_jax(device):
    if relu_tvm_ffi._ops.has_jax:
        jnp = pytest.importorskip("jax.numpy")
        x = jnp.linspace(-1.0, 1.0, 21, dtype=jnp.float32)
        assert (relu_tvm_ffi.relu_jax(x) == jnp.maximum(x, 0)).all()
    else:
        with pytest.raises(RuntimeError, match="needs jax and jax_tvm_ffi"):
            relu_tvm_ffi.relu_jax(None)
