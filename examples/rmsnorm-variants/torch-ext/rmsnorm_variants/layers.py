"""Kernel layers for `kernelize`.

kernelize binds a layer's `forward` to the module it replaces, so `self` is that module: the
layers read its state and define nothing else. The loader rejects a kernel layer with a
constructor or with members beyond `has_backward` and `can_torch_compile`, and one whose
`forward` takes other arguments than the original's.

Where the module's weight (or the gate) has another dtype than the input, as when a bfloat16
input meets a float32 weight, the layers compute in float32 and return the input's dtype, as
the modules they replace do.
"""
import torch
from torch import nn

from .functions import rms_norm_gated, rms_norm_zero_centered


class RMSNormGated(nn.Module):
    """For modules with `weight`, `variance_epsilon` and `activation` ("silu" or "sigmoid"), as
    transformers' Qwen3NextRMSNormGated and KimiLinearRMSNormGated."""

    # The ops have fake implementations but no autograd formula.
    can_torch_compile = True
    has_backward = False

    def forward(self, hidden_states: torch.Tensor, gate: torch.Tensor = None) -> torch.Tensor:
        if gate is None:
            raise ValueError("RMSNormGated: the kernel layer needs a gate")
        dtype = hidden_states.dtype
        if self.weight.dtype == dtype and gate.dtype == dtype:
            return rms_norm_gated(hidden_states, gate, self.weight, self.variance_epsilon,
                                  self.activation)
        return rms_norm_gated(hidden_states.float(), gate.float(), self.weight.float(),
                              self.variance_epsilon, self.activation).to(dtype)


class RMSNormZeroCentered(nn.Module):
    """For modules with `weight` (stored as an offset from one) and `eps`, as transformers'
    Qwen3_5RMSNorm."""

    can_torch_compile = True
    has_backward = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight.dtype == x.dtype:
            return rms_norm_zero_centered(x, self.weight, self.eps)
        return rms_norm_zero_centered(x.float(), self.weight.float(), self.eps).to(x.dtype)
