"""{{ kernel_name }}: a compute kernel for PyTorch.

The starter operation computes SiLU (x * sigmoid(x)) elementwise; replace it with yours. Each
function in `__all__` is part of the kernel's public API and is listed on its card; `layers`
holds the kernel's layers for `kernelize`.
"""
from typing import Optional

import torch

from ._ops import ops

__all__ = ["{{ kernel_name_normalized }}", "layers"]


def {{ kernel_name_normalized }}(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Returns SiLU(x), written into `out` when it is given.

    Args:
        x: a contiguous float32, float16 or bfloat16 tensor on a device the kernel supports.
        out: an optional contiguous tensor with the shape, dtype and device of `x`.
    """
    if out is None:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    ops.{{ kernel_name_normalized }}(out, x)
    return out


from . import layers  # noqa: E402  (after the functions the layers may use)
