"""{{ kernel_name }}'s layers, for `kernelize`: a model layer registered under the name
"{{ kernel_name_class }}" gets this class's `forward` (see the kernel's card).

kernelize binds `forward` to the module it replaces, so `self` is that module; the loader
refuses a layer with a constructor or with members beyond `has_backward` and
`can_torch_compile`, and one whose `forward` takes other arguments than the original's.
"""
import torch
from torch import nn

from ._ops import ops


class {{ kernel_name_class }}(nn.Module):
    """SiLU(x) through the kernel's op (inference only: the op has no backward)."""

    has_backward = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
        ops.{{ kernel_name_normalized }}(out, x)
        return out
