# SPDX-License-Identifier: Apache-2.0
"""A torch module over relu, offered only where torch is installed (tvm-ffi kernels run
without it)."""
from .. import relu

__all__ = []

try:
    import torch
except ImportError:
    torch = None

if torch is not None:

    class ReLU(torch.nn.Module):
        """relu as a layer: allocates the output and calls the kernel."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return relu(x, torch.empty_like(x))

    __all__.append("ReLU")
