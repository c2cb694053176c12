"""Kernel layers for `kernelize`, one per activation layer name transformers 5.22.2 decorates.

kernelize binds a layer's `forward` to the module it replaces, so `self` is that module. These
activations keep no state, so the layers read nothing from it. The loader rejects a kernel layer
with a constructor or with members beyond `has_backward` and `can_torch_compile`, and one whose
`forward` takes other arguments than the original's.
"""
import torch
from torch import nn

from .functions import gelu, gelu_tanh, quick_gelu, silu


class GeLU(nn.Module):
    """For transformers' GELUActivation (exact GELU; `use_gelu_python` computes the same)."""

    # The ops have fake implementations but no autograd formula.
    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return gelu(input)


class GeluTanh(nn.Module):
    """For transformers' GELUTanh (the tanh approximation)."""

    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return gelu_tanh(input)


class NewGELU(nn.Module):
    """For transformers' NewGELUActivation: the tanh approximation written out in torch ops."""

    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return gelu_tanh(input)


class FastGELU(nn.Module):
    """For transformers' FastGELUActivation: the tanh approximation with sqrt(2/pi) rounded to
    0.7978845608 (a 4e-12 relative difference, far below float32's resolution)."""

    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return gelu_tanh(input)


class QuickGELU(nn.Module):
    """For transformers' QuickGELUActivation."""

    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return quick_gelu(input)


class SiLU(nn.Module):
    """For transformers' SiLUActivation."""

    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return silu(input)
