"""The rmsnorm example against plain torch, and its layers against the modules they replace.

`kernel-builder test` puts the built variant on the path as `rmsnorm`. Both variants serve CPU
tensors; the cuda variant is also tested on the GPU where torch sees one.
"""
import inspect
import json
import types
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import rmsnorm as rmsnorm_package
from rmsnorm import layers, rms_norm, silu


def _devices():
    metadata = json.loads((Path(rmsnorm_package.__file__).parent / "metadata.json").read_text())
    devices = ["cpu"]
    if metadata["backend"]["type"] == "cuda" and torch.cuda.is_available():
        devices.append("cuda")
    return devices


DEVICES = _devices()


class ReferenceRMSNorm(nn.Module):
    """transformers' LlamaRMSNorm, restated: the module the RMSNorm layer replaces."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class ReferenceSiLU(nn.Module):
    def forward(self, input):
        return F.silu(input)


def reference_rms_norm(x, weight, eps):
    module = ReferenceRMSNorm(x.shape[-1], eps).to(x.device)
    module.weight.data = weight.clone()
    return module(x)


@pytest.mark.kernels_ci
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1, 8), (3, 5, 64), (2, 1000), (4, 7, 3)])
def test_rms_norm_matches_torch(device, shape):
    torch.manual_seed(0)
    x = torch.randn(shape, device=device) * 3
    weight = torch.randn(shape[-1], device=device)
    with torch.no_grad():
        torch.testing.assert_close(rms_norm(x, weight, 1e-5), reference_rms_norm(x, weight, 1e-5))


@pytest.mark.kernels_ci
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_rms_norm_other_dtypes(device, dtype):
    torch.manual_seed(1)
    x = torch.randn(6, 96, device=device).to(dtype)
    weight = torch.randn(96, device=device).to(dtype)
    expected = reference_rms_norm(x.float(), weight.float(), 1e-6)
    # bf16/fp16 round the normalized value and the product; double computes in double.
    tolerance = {torch.float64: (1e-6, 1e-6), torch.bfloat16: (2e-2, 2e-2),
                 torch.float16: (2e-3, 2e-3)}[dtype]
    torch.testing.assert_close(rms_norm(x, weight).float(), expected,
                               rtol=tolerance[0], atol=tolerance[1])


@pytest.mark.kernels_ci
@pytest.mark.parametrize("device", DEVICES)
def test_rms_norm_writes_into_out_and_checks_arguments(device):
    x = torch.randn(4, 16, device=device)
    weight = torch.rand(16, device=device)
    out = torch.full_like(x, float("nan"))
    assert rms_norm(x, weight, out=out) is out
    torch.testing.assert_close(out, reference_rms_norm(x, weight, 1e-6))
    with pytest.raises(RuntimeError, match="weight must be 1-d"):
        rms_norm(x, torch.ones(15, device=device))
    with pytest.raises(RuntimeError, match="one dtype"):
        rms_norm(x, torch.ones(16, device=device, dtype=torch.float64))
    assert rms_norm(torch.empty(0, 16, device=device), weight).shape == (0, 16)


@pytest.mark.kernels_ci
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1,), (33, 1000), (2, 3, 257)])
def test_silu_matches_torch(device, shape):
    torch.manual_seed(2)
    x = torch.randn(shape, device=device) * 4
    torch.testing.assert_close(silu(x), F.silu(x))


@pytest.mark.kernels_ci
def test_layers_follow_the_kernel_layer_rules():
    # What kernelize checks before it binds a layer: no constructor, no members beyond the two
    # flags, and a forward taking what the replaced module's forward takes.
    module_members = {name for name, _ in inspect.getmembers(nn.Module)}
    for layer, replaced in ((layers.RMSNorm, ReferenceRMSNorm), (layers.SiLU, ReferenceSiLU)):
        assert issubclass(layer, nn.Module)
        assert layer.__init__ is nn.Module.__init__
        extra = {name for name, _ in inspect.getmembers(layer)} - module_members
        assert extra <= {"can_torch_compile", "has_backward"}, extra
        ours = list(inspect.signature(layer.forward).parameters.values())
        theirs = list(inspect.signature(replaced.forward).parameters.values())
        assert [p.kind for p in ours] == [p.kind for p in theirs]
        assert layer.can_torch_compile is True


@pytest.mark.kernels_ci
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("weight_dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_layer_bound_to_the_module_it_replaces(device, weight_dtype):
    torch.manual_seed(3)
    module = ReferenceRMSNorm(48, eps=1e-5).to(device)
    with torch.no_grad():
        module.weight.copy_(torch.randn(48))
    module.to(weight_dtype)
    x = torch.randn(2, 5, 48, device=device)
    with torch.no_grad():
        expected = module(x)
        # kernelize does exactly this: the layer's forward bound to the original module.
        module.forward = types.MethodType(layers.RMSNorm.forward, module)
        got = module(x)
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected)


@pytest.mark.kernels_ci
def test_fake_registrations_give_shapes_without_computing():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(3, 5, 64)
        assert rms_norm(x, torch.empty(64)).shape == (3, 5, 64)
        assert silu(x).shape == (3, 5, 64)
    namespace, name = rmsnorm_package.functions.add_op_namespace_prefix("rms_norm").split("::")
    op = getattr(getattr(torch.ops, namespace), name)
    # torch.library's own checker compares the fake against the real kernel.
    torch.library.opcheck(op, (torch.empty(4, 6), torch.randn(4, 6), torch.rand(6), 1e-6),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.kernels_ci
def test_layers_compile_with_fullgraph():
    torch.manual_seed(4)
    norm = ReferenceRMSNorm(32)
    activation = ReferenceSiLU()
    with torch.no_grad():
        norm.weight.copy_(torch.randn(32))
    x = torch.randn(4, 32)
    with torch.no_grad():
        expected = activation(norm(x))
        norm.forward = types.MethodType(layers.RMSNorm.forward, norm)
        activation.forward = types.MethodType(layers.SiLU.forward, activation)
        compiled = torch.compile(lambda t: activation(norm(t)), fullgraph=True)
        torch.testing.assert_close(compiled(x), expected)
