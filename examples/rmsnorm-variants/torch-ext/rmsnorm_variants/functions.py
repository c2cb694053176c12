"""The ops as functions, and their fake implementations for torch.compile and FakeTensor."""
from typing import Optional

import torch

from ._ops import add_op_namespace_prefix, ops


def rms_norm_gated(input: torch.Tensor, gate: torch.Tensor, weight: torch.Tensor,
                   eps: float = 1e-6, activation: str = "silu",
                   out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`weight * input / sqrt(mean(input**2, -1) + eps) * act(gate)`, act "silu" or "sigmoid".

    input, gate and weight must share one dtype; gate has the input's shape, weight the size
    of its last dimension."""
    input = input.contiguous()
    gate = gate.contiguous()
    if out is None:
        out = torch.empty_like(input)
    ops.rms_norm_gated(out, input, gate, weight, eps, activation)
    return out


def rms_norm_zero_centered(input: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
                           out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`input / sqrt(mean(input**2, -1) + eps) * (1 + weight)`."""
    input = input.contiguous()
    if out is None:
        out = torch.empty_like(input)
    ops.rms_norm_zero_centered(out, input, weight, eps)
    return out


# The ops only write into `out`, so tracing needs nothing computed: these let torch.compile (and
# FakeTensorMode) run through them without calling the CPU code.
@torch.library.register_fake(add_op_namespace_prefix("rms_norm_gated"))
def _rms_norm_gated_fake(out: torch.Tensor, input: torch.Tensor, gate: torch.Tensor,
                         weight: torch.Tensor, eps: float, activation: str) -> None:
    torch._check(gate.shape == input.shape,
                 lambda: "rms_norm_gated: gate must have the input's shape")


@torch.library.register_fake(add_op_namespace_prefix("rms_norm_zero_centered"))
def _rms_norm_zero_centered_fake(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                                 eps: float) -> None:
    torch._check(weight.shape[0] == input.shape[-1],
                 lambda: "rms_norm_zero_centered: weight must have the size of the input's last "
                         "dimension")
