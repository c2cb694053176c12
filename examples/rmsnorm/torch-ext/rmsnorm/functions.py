"""The ops as functions, and their fake implementations for torch.compile and FakeTensor."""
from typing import Optional

import torch

from ._ops import add_op_namespace_prefix, ops


def rms_norm(input: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
             out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`weight * input / sqrt(mean(input**2, -1) + eps)`, written into `out` when it is given.

    `weight` must have the input's dtype and the size of its last dimension."""
    input = input.contiguous()
    if out is None:
        out = torch.empty_like(input)
    ops.rms_norm(out, input, weight, eps)
    return out


def silu(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`input * sigmoid(input)`, written into `out` when it is given."""
    input = input.contiguous()
    if out is None:
        out = torch.empty_like(input)
    ops.silu(out, input)
    return out


# The ops only write into `out`, so tracing needs nothing computed: these let torch.compile
# (and FakeTensorMode) run through them without calling the CPU or CUDA code.
@torch.library.register_fake(add_op_namespace_prefix("rms_norm"))
def _rms_norm_fake(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                   eps: float) -> None:
    torch._check(weight.shape[0] == input.shape[-1],
                 lambda: "rms_norm: weight must have the size of the input's last dimension")


@torch.library.register_fake(add_op_namespace_prefix("silu"))
def _silu_fake(out: torch.Tensor, input: torch.Tensor) -> None:
    return None
