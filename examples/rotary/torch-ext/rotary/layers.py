"""Kernel layers for `kernelize`.

transformers turns `apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1)` into a module whose
forward kernelize replaces; `self` is that module, which holds nothing the layers need. The
loader rejects a kernel layer with a constructor or with members beyond `has_backward` and
`can_torch_compile`, and one whose `forward` takes other arguments than the original's.
"""
import torch
from torch import nn

from .functions import apply_rotary


class RotaryPosEmb(nn.Module):
    """For `apply_rotary_pos_emb` with transformers' usual `rotate_half`, `cat(-x2, x1)`; cos and
    sin of the full head dimension (duplicated halves) or of half of it (gpt-oss)."""

    # The op has a fake implementation but no autograd formula.
    can_torch_compile = True
    has_backward = False

    def forward(self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                unsqueeze_dim: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        return (apply_rotary(q, cos, sin, unsqueeze_dim),
                apply_rotary(k, cos, sin, unsqueeze_dim))


class RotaryPosEmbInterleaved(nn.Module):
    """For `apply_rotary_pos_emb` that rotates neighbouring pairs (x[2i], x[2i + 1]) with cos and
    sin of half the head dimension, one angle per pair (transformers' openai_privacy_filter)."""

    can_torch_compile = True
    has_backward = False

    def forward(self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                unsqueeze_dim: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        return (apply_rotary(q, cos, sin, unsqueeze_dim, interleaved=True),
                apply_rotary(k, cos, sin, unsqueeze_dim, interleaved=True))


class RotaryPosEmbReversed(nn.Module):
    """For `apply_rotary_pos_emb` whose `rotate_half` is `cat(x2, -x1)`: the rotation by the
    opposite angle (transformers' nanochat)."""

    can_torch_compile = True
    has_backward = False

    def forward(self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                unsqueeze_dim: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        return (apply_rotary(q, cos, sin, unsqueeze_dim, reverse=True),
                apply_rotary(k, cos, sin, unsqueeze_dim, reverse=True))
