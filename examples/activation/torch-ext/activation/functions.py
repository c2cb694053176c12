"""The ops as functions, and their fake implementations for torch.compile and FakeTensor."""
from typing import Optional

import torch

from ._ops import add_op_namespace_prefix, ops


def _apply(op, input: torch.Tensor, out: Optional[torch.Tensor]) -> torch.Tensor:
    input = input.contiguous()
    if out is None:
        out = torch.empty_like(input)
    op(out, input)
    return out


def gelu(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`x * Phi(x)` with the exact normal CDF, as `torch.nn.functional.gelu`."""
    return _apply(ops.gelu, input, out)


def gelu_tanh(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """GELU's tanh approximation, as `torch.nn.functional.gelu(approximate="tanh")`."""
    return _apply(ops.gelu_tanh, input, out)


def quick_gelu(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`x * sigmoid(1.702 * x)`."""
    return _apply(ops.quick_gelu, input, out)


def silu(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`x * sigmoid(x)`."""
    return _apply(ops.silu, input, out)


# The ops only write into `out`, so tracing needs nothing computed: these let torch.compile
# (and FakeTensorMode) run through them without calling the CPU code.
def _register_fake(name: str) -> None:
    @torch.library.register_fake(add_op_namespace_prefix(name))
    def _fake(out: torch.Tensor, input: torch.Tensor) -> None:
        return None


for _name in ("gelu", "gelu_tanh", "quick_gelu", "silu"):
    _register_fake(_name)
