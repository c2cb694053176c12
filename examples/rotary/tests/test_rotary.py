"""The rotary example against transformers' apply_rotary_pos_emb (restated here, so the kernel's
tests need nothing but torch), and its layers against the function module they replace.

`kernel-builder test` puts the built variant on the path as `rotary`. Every variant serves CPU
tensors only.
"""
import inspect
import types

import pytest
import torch
from torch import nn

import rotary as rotary_package
from rotary import apply_rotary, layers


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_reversed(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((x2, -x1), dim=-1)


def reference_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1, rotate=rotate_half):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate(q) * sin), (k * cos) + (rotate(k) * sin)


def reference_half_width(q, k, cos, sin, unsqueeze_dim=1):
    """gpt-oss's form: cos and sin of half the head dimension, applied to each half."""
    def apply(x):
        first, second = torch.chunk(x, 2, dim=-1)
        return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)

    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return apply(q), apply(k)


def reference_interleaved(q, k, cos, sin, unsqueeze_dim=1):
    """openai_privacy_filter's form: neighbouring pairs, cos and sin of half the head dimension."""
    def apply(x):
        first, second = x[..., ::2], x[..., 1::2]
        return torch.stack((first * cos - second * sin, second * cos + first * sin),
                           dim=-1).flatten(-2)

    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return apply(q), apply(k)


class ReferenceFunc(nn.Module):
    """What transformers makes of the decorated function: a module whose forward is it."""

    def forward(self, q, k, cos, sin, unsqueeze_dim=1):
        return reference_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim)


def angles(batch, seq, dim, base=10000.0):
    """cos and sin as transformers' rotary embedding modules make them: [batch, seq, dim] with
    duplicated halves, from positions that differ per batch row."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    positions = torch.arange(seq, dtype=torch.float64)[None, :] + torch.arange(batch)[:, None] * 3
    freqs = positions[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().float(), emb.sin().float()


@pytest.mark.kernels_ci
@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (1, 1), (8, 8)])
@pytest.mark.parametrize("dim", [2, 16, 64])
def test_matches_apply_rotary_pos_emb(heads, kv_heads, dim):
    torch.manual_seed(0)
    q = torch.randn(2, heads, 7, dim)
    k = torch.randn(2, kv_heads, 7, dim)
    cos, sin = angles(2, 7, dim)
    expected = reference_apply_rotary_pos_emb(q, k, cos, sin)
    got = (apply_rotary(q, cos, sin), apply_rotary(k, cos, sin))
    torch.testing.assert_close(got, expected)


@pytest.mark.kernels_ci
def test_unsqueeze_dim_two_and_noncontiguous_inputs():
    # [batch, seq, heads, dim] with unsqueeze_dim=2, q taken as a transposed (strided) view.
    torch.manual_seed(1)
    q = torch.randn(2, 4, 5, 32).transpose(1, 2)
    k = torch.randn(2, 5, 2, 32)
    cos, sin = angles(2, 5, 32)
    expected = reference_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=2)
    got = layers.RotaryPosEmb.forward(None, q, k, cos, sin, unsqueeze_dim=2)
    torch.testing.assert_close(got, expected)


@pytest.mark.kernels_ci
def test_half_width_interleaved_and_reversed_layouts():
    torch.manual_seed(2)
    q, k = torch.randn(2, 4, 6, 16), torch.randn(2, 2, 6, 16)
    cos, sin = angles(2, 6, 16)
    half_cos, half_sin = cos[..., :8], sin[..., :8]
    torch.testing.assert_close(layers.RotaryPosEmb.forward(None, q, k, half_cos, half_sin),
                               reference_half_width(q, k, half_cos, half_sin))
    torch.testing.assert_close(
        layers.RotaryPosEmbReversed.forward(None, q, k, cos, sin),
        reference_apply_rotary_pos_emb(q, k, cos, sin, rotate=rotate_half_reversed))
    torch.testing.assert_close(
        layers.RotaryPosEmbInterleaved.forward(None, q, k, half_cos, half_sin),
        reference_interleaved(q, k, half_cos, half_sin))
    # Interleaved with full-width angles: each element reads its own (repeat_interleave'd) one.
    full_cos, full_sin = (t.repeat_interleave(2, dim=-1) for t in (half_cos, half_sin))
    torch.testing.assert_close(
        (apply_rotary(q, full_cos, full_sin, interleaved=True),
         apply_rotary(k, full_cos, full_sin, interleaved=True)),
        reference_interleaved(q, k, half_cos, half_sin))


@pytest.mark.kernels_ci
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_other_dtypes(dtype):
    torch.manual_seed(3)
    q = torch.randn(2, 4, 9, 32).to(dtype)
    cos, sin = (t.to(dtype) for t in angles(2, 9, 32))
    got = apply_rotary(q, cos, sin)
    assert got.dtype == dtype
    # Computed from the same rounded inputs in double, rounded once.
    expected = apply_rotary(q.double(), cos.double(), sin.double()).to(dtype)
    torch.testing.assert_close(got, expected)
    # A float cos promotes a half-precision q, as the reference's `q * cos` does.
    assert apply_rotary(q, cos.float(), sin.float()).dtype == torch.promote_types(dtype,
                                                                                  torch.float32)


@pytest.mark.kernels_ci
def test_checks_arguments():
    namespace, name = rotary_package.functions.add_op_namespace_prefix("apply_rotary").split("::")
    op = getattr(getattr(torch.ops, namespace), name)
    x = torch.randn(2, 3, 8)
    with pytest.raises(RuntimeError, match="last dimension must be even"):
        op(torch.empty(2, 3, 7), torch.randn(2, 3, 7), torch.randn(2, 3, 7), torch.randn(2, 3, 7),
           False, False)
    with pytest.raises(RuntimeError, match="x's \\(8\\) or half of it"):
        op(torch.empty_like(x), x, torch.randn(2, 3, 3), torch.randn(2, 3, 3), False, False)
    with pytest.raises(RuntimeError, match="x's sizes but the last"):
        op(torch.empty_like(x), x, torch.randn(2, 1, 8), torch.randn(2, 1, 8), False, False)
    with pytest.raises(RuntimeError, match="one dtype"):
        op(torch.empty_like(x), x, torch.randn(2, 3, 8).double(), torch.randn(2, 3, 8), False,
           False)
    with pytest.raises(RuntimeError):  # not broadcastable: expand refuses it
        apply_rotary(x, torch.randn(5, 8), torch.randn(5, 8))
    assert apply_rotary(torch.empty(0, 3, 8), torch.empty(0, 8), torch.empty(0, 8),
                        unsqueeze_dim=1).shape == (0, 3, 8)


@pytest.mark.kernels_ci
@pytest.mark.parametrize("layer", [layers.RotaryPosEmb, layers.RotaryPosEmbInterleaved,
                                   layers.RotaryPosEmbReversed])
def test_layers_follow_the_kernel_layer_rules(layer):
    module_members = {name for name, _ in inspect.getmembers(nn.Module)}
    assert issubclass(layer, nn.Module)
    assert layer.__init__ is nn.Module.__init__
    extra = {name for name, _ in inspect.getmembers(layer)} - module_members
    assert extra <= {"can_torch_compile", "has_backward"}, extra
    ours = list(inspect.signature(layer.forward).parameters.values())
    theirs = list(inspect.signature(ReferenceFunc.forward).parameters.values())
    assert [p.kind for p in ours] == [p.kind for p in theirs]


@pytest.mark.kernels_ci
def test_layer_bound_to_the_module_it_replaces_and_compiled():
    torch.manual_seed(4)
    module = ReferenceFunc()
    q, k = torch.randn(1, 4, 5, 16), torch.randn(1, 2, 5, 16)
    cos, sin = angles(1, 5, 16)
    expected = module(q, k, cos, sin)
    module.forward = types.MethodType(layers.RotaryPosEmb.forward, module)
    torch.testing.assert_close(module(q, k, cos, sin), expected)
    compiled = torch.compile(lambda *args: module(*args), fullgraph=True)
    torch.testing.assert_close(compiled(q, k, cos, sin), expected)
