"""relu-torch-stable-abi: relu written against the Torch stable ABI (cpu, cuda, rocm, xpu)."""
import torch

from ._ops import ops

__all__ = ["relu"]


def relu(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """max(x, 0) into `out` (a new tensor when not given)."""
    if out is None:
        out = torch.empty_like(x)
    ops.relu(out, x)
    return out
