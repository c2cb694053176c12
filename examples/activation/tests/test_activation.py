"""The activation example against torch, and its layers against transformers' activation modules
(restated here, so the kernel's tests need nothing but torch).

`kernel-builder test` puts the built variant on the path as `activation`. Every variant serves
CPU tensors only.
"""
import inspect
import math
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import activation as activation_package
from activation import gelu, gelu_tanh, layers, quick_gelu, silu


class ReferenceGELU(nn.Module):
    def forward(self, input):
        return F.gelu(input)


class ReferenceGELUTanh(nn.Module):
    def forward(self, input):
        return F.gelu(input, approximate="tanh")


class ReferenceNewGELU(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                               * (input + 0.044715 * torch.pow(input, 3.0))))


class ReferenceFastGELU(nn.Module):
    def forward(self, input):
        inner = input * 0.7978845608 * (1.0 + 0.044715 * input * input)
        return 0.5 * input * (1.0 + torch.tanh(inner))


class ReferenceQuickGELU(nn.Module):
    def forward(self, input):
        return input * torch.sigmoid(1.702 * input)


class ReferenceSiLU(nn.Module):
    def forward(self, input):
        return F.silu(input)


# (kernel layer, the module it replaces, the op behind it)
LAYERS = [
    (layers.GeLU, ReferenceGELU, gelu),
    (layers.GeluTanh, ReferenceGELUTanh, gelu_tanh),
    (layers.NewGELU, ReferenceNewGELU, gelu_tanh),
    (layers.FastGELU, ReferenceFastGELU, gelu_tanh),
    (layers.QuickGELU, ReferenceQuickGELU, quick_gelu),
    (layers.SiLU, ReferenceSiLU, silu),
]
IDS = [layer.__name__ for layer, _, _ in LAYERS]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("layer, reference, op", LAYERS, ids=IDS)
@pytest.mark.parametrize("shape", [(1,), (3, 1000), (2, 5, 257)])
def test_ops_match_the_modules_they_replace(layer, reference, op, shape):
    torch.manual_seed(0)
    # Wide enough to reach the saturated tails, where exp() overflows in naive code.
    x = torch.randn(shape) * 6
    x.view(-1)[0] = -100.0
    torch.testing.assert_close(op(x), reference()(x))


@pytest.mark.kernels_ci
@pytest.mark.parametrize("op", [gelu, gelu_tanh, quick_gelu, silu], ids=lambda op: op.__name__)
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_other_dtypes_compute_in_float_and_round_once(op, dtype):
    torch.manual_seed(1)
    x = (torch.randn(4, 300) * 3).to(dtype)
    # The result computed in double from the same input, rounded once to the dtype.
    expected = op(x.double()).to(dtype)
    got = op(x)
    assert got.dtype == dtype
    torch.testing.assert_close(got, expected)


@pytest.mark.kernels_ci
def test_out_noncontiguous_input_and_checks():
    x = torch.randn(8, 6).t()  # not contiguous: the functions copy it first
    out = torch.empty(6, 8)
    assert silu(x, out=out) is out
    torch.testing.assert_close(out, F.silu(x))
    assert gelu(torch.empty(0, 3)).shape == (0, 3)
    namespace, name = activation_package.functions.add_op_namespace_prefix("gelu").split("::")
    op = getattr(getattr(torch.ops, namespace), name)
    with pytest.raises(RuntimeError, match="out must match the input"):
        op(torch.empty(3), torch.randn(4))
    with pytest.raises(RuntimeError, match="out must match the input"):
        op(torch.empty(4, dtype=torch.float64), torch.randn(4))


@pytest.mark.kernels_ci
@pytest.mark.parametrize("layer, reference, op", LAYERS, ids=IDS)
def test_layers_follow_the_kernel_layer_rules(layer, reference, op):
    # What kernelize checks before it binds a layer: no constructor, no members beyond the two
    # flags, and a forward taking what the replaced module's forward takes.
    module_members = {name for name, _ in inspect.getmembers(nn.Module)}
    assert issubclass(layer, nn.Module)
    assert layer.__init__ is nn.Module.__init__
    extra = {name for name, _ in inspect.getmembers(layer)} - module_members
    assert extra <= {"can_torch_compile", "has_backward"}, extra
    ours = list(inspect.signature(layer.forward).parameters.values())
    theirs = list(inspect.signature(reference.forward).parameters.values())
    assert [p.kind for p in ours] == [p.kind for p in theirs]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("layer, reference, op", LAYERS, ids=IDS)
def test_layer_bound_to_the_module_it_replaces(layer, reference, op):
    torch.manual_seed(2)
    module = reference()
    x = torch.randn(2, 7, 48) * 3
    expected = module(x)
    # kernelize does exactly this: the layer's forward bound to the original module.
    module.forward = types.MethodType(layer.forward, module)
    torch.testing.assert_close(module(x), expected)


@pytest.mark.kernels_ci
def test_fake_registrations_and_fullgraph_compile():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        assert quick_gelu(torch.empty(3, 64)).shape == (3, 64)
    namespace, name = activation_package.functions.add_op_namespace_prefix("silu").split("::")
    op = getattr(getattr(torch.ops, namespace), name)
    # torch.library's own checker compares the fake against the real kernel.
    torch.library.opcheck(op, (torch.empty(4, 6), torch.randn(4, 6)),
                          test_utils=("test_schema", "test_faketensor"))
    module = ReferenceGELUTanh()
    module.forward = types.MethodType(layers.GeluTanh.forward, module)
    x = torch.randn(4, 32)
    compiled = torch.compile(lambda t: module(t) * 2, fullgraph=True)
    torch.testing.assert_close(compiled(x), F.gelu(x, approximate="tanh") * 2)
