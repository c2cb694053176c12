"""The rmsnorm-variants example against the transformers modules its layers replace (restated
here, so the kernel's tests need nothing but torch).

`kernel-builder test` puts the built variant on the path as `rmsnorm_variants`. Every variant
serves CPU tensors only.
"""
import inspect
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import rmsnorm_variants as package
from rmsnorm_variants import layers, rms_norm_gated, rms_norm_zero_centered


class ReferenceRMSNormGated(nn.Module):
    """transformers' Qwen3NextRMSNormGated ("silu") / KimiLinearRMSNormGated ("sigmoid")."""

    def __init__(self, hidden_size, eps=1e-6, activation="silu"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps
        self.activation = activation

    def forward(self, hidden_states, gate=None):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        hidden_states = self.weight.to(torch.float32) * hidden_states
        act = F.silu if self.activation == "silu" else torch.sigmoid
        hidden_states = hidden_states * act(gate.to(torch.float32))
        return hidden_states.to(input_dtype)


class ReferenceRMSNormZeroCentered(nn.Module):
    """transformers' Qwen3_5RMSNorm."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        output = x.float()
        output = output * torch.rsqrt(output.pow(2).mean(-1, keepdim=True) + self.eps)
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


def randomized(module):
    with torch.no_grad():
        module.weight.copy_(torch.randn_like(module.weight) * 0.5)
    return module


@pytest.mark.kernels_ci
@pytest.mark.parametrize("activation", ["silu", "sigmoid"])
@pytest.mark.parametrize("shape", [(1, 8), (3, 5, 64), (2, 1000)])
def test_rms_norm_gated_matches_the_module(activation, shape):
    torch.manual_seed(0)
    module = randomized(ReferenceRMSNormGated(shape[-1], 1e-5, activation))
    x, gate = torch.randn(shape) * 3, torch.randn(shape) * 2
    with torch.no_grad():
        torch.testing.assert_close(
            rms_norm_gated(x, gate, module.weight, 1e-5, activation), module(x, gate))


@pytest.mark.kernels_ci
@pytest.mark.parametrize("shape", [(1, 8), (3, 5, 64), (2, 1000)])
def test_rms_norm_zero_centered_matches_the_module(shape):
    torch.manual_seed(1)
    module = randomized(ReferenceRMSNormZeroCentered(shape[-1], 1e-6))
    x = torch.randn(shape) * 3
    with torch.no_grad():
        torch.testing.assert_close(rms_norm_zero_centered(x, module.weight, 1e-6), module(x))


@pytest.mark.kernels_ci
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_other_dtypes(dtype):
    torch.manual_seed(2)
    x, gate = torch.randn(6, 96).to(dtype), torch.randn(6, 96).to(dtype)
    weight = torch.randn(96).to(dtype)
    # Computed from the same rounded inputs in double, rounded once.
    torch.testing.assert_close(rms_norm_gated(x, gate, weight),
                               rms_norm_gated(x.double(), gate.double(), weight.double()).to(dtype))
    torch.testing.assert_close(rms_norm_zero_centered(x, weight),
                               rms_norm_zero_centered(x.double(), weight.double()).to(dtype))


@pytest.mark.kernels_ci
def test_checks_arguments():
    x = torch.randn(4, 16)
    with pytest.raises(RuntimeError, match="activation must be"):
        rms_norm_gated(x, x, torch.ones(16), activation="gelu")
    with pytest.raises(RuntimeError, match="gate must be"):
        rms_norm_gated(x, torch.randn(4, 8), torch.ones(16))
    with pytest.raises(RuntimeError, match="weight must be 1-d"):
        rms_norm_zero_centered(x, torch.ones(15))
    with pytest.raises(RuntimeError, match="one dtype"):
        rms_norm_zero_centered(x, torch.ones(16, dtype=torch.float64))
    assert rms_norm_zero_centered(torch.empty(0, 16), torch.ones(16)).shape == (0, 16)


@pytest.mark.kernels_ci
@pytest.mark.parametrize("layer, replaced", [
    (layers.RMSNormGated, ReferenceRMSNormGated),
    (layers.RMSNormZeroCentered, ReferenceRMSNormZeroCentered),
])
def test_layers_follow_the_kernel_layer_rules(layer, replaced):
    module_members = {name for name, _ in inspect.getmembers(nn.Module)}
    assert issubclass(layer, nn.Module)
    assert layer.__init__ is nn.Module.__init__
    extra = {name for name, _ in inspect.getmembers(layer)} - module_members
    assert extra <= {"can_torch_compile", "has_backward"}, extra
    ours = list(inspect.signature(layer.forward).parameters.values())
    theirs = list(inspect.signature(replaced.forward).parameters.values())
    assert [p.kind for p in ours] == [p.kind for p in theirs]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("weight_dtype", [torch.float32, torch.bfloat16])
def test_layers_bound_to_the_modules_they_replace(weight_dtype):
    torch.manual_seed(3)
    gated = randomized(ReferenceRMSNormGated(48, 1e-5, "sigmoid")).to(weight_dtype)
    centered = randomized(ReferenceRMSNormZeroCentered(48, 1e-5)).to(weight_dtype)
    x, gate = torch.randn(2, 5, 48), torch.randn(2, 5, 48)
    with torch.no_grad():
        expected = (gated(x, gate), centered(x))
        # kernelize does exactly this: the layer's forward bound to the original module.
        gated.forward = types.MethodType(layers.RMSNormGated.forward, gated)
        centered.forward = types.MethodType(layers.RMSNormZeroCentered.forward, centered)
        got = (gated(x, gate), centered(x))
    assert [t.dtype for t in got] == [t.dtype for t in expected]
    torch.testing.assert_close(got, expected)
    with pytest.raises(ValueError, match="needs a gate"):
        gated(x)


@pytest.mark.kernels_ci
def test_fake_registrations_and_fullgraph_compile():
    namespace, name = package.functions.add_op_namespace_prefix("rms_norm_gated").split("::")
    op = getattr(getattr(torch.ops, namespace), name)
    torch.library.opcheck(op, (torch.empty(4, 6), torch.randn(4, 6), torch.randn(4, 6),
                               torch.rand(6), 1e-6, "silu"),
                          test_utils=("test_schema", "test_faketensor"))
    centered = randomized(ReferenceRMSNormZeroCentered(32))
    x = torch.randn(4, 32)
    with torch.no_grad():
        expected = centered(x)
        centered.forward = types.MethodType(layers.RMSNormZeroCentered.forward, centered)
        compiled = torch.compile(lambda t: centered(t), fullgraph=True)
        torch.testing.assert_close(compiled(x), expected)
