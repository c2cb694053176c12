"""Kernel layers for `kernelize`.

kernelize binds a layer's `forward` to the module it replaces, so `self` is that module: the
layers read its state (`weight`, `variance_epsilon`) and define nothing else. The loader
rejects a kernel layer with a constructor or with members beyond `has_backward` and
`can_torch_compile`, and one whose `forward` takes other arguments than the original's.
"""
import torch
from torch import nn

from .functions import rms_norm, silu


class RMSNorm(nn.Module):
    """For modules with `weight` and `variance_epsilon`, as transformers' LlamaRMSNorm."""

    # The ops have fake implementations but no autograd formula.
    can_torch_compile = True
    has_backward = False

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.weight.dtype == hidden_states.dtype:
            return rms_norm(hidden_states, self.weight, self.variance_epsilon)
        # A weight of another dtype promotes the result, as in the reference module: normalize
        # with a unit weight (exact), then multiply in torch.
        unit = torch.ones(hidden_states.shape[-1], dtype=hidden_states.dtype,
                          device=hidden_states.device)
        return self.weight * rms_norm(hidden_states, unit, self.variance_epsilon)


class SiLU(nn.Module):
    """For SiLU activation modules, as transformers' SiLUActivation."""

    can_torch_compile = True
    has_backward = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return silu(input)
