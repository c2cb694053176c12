"""dep-base: a small kernel that other kernels (examples/dep-user) declare in kernel-depends."""
import torch

__all__ = ["scale_and_shift", "NAME"]

# dep-user's tests read this to tell that the module they were handed is this kernel.
NAME = "dep-base"


def scale_and_shift(x: torch.Tensor, scale: float, shift: float) -> torch.Tensor:
    """`x * scale + shift`."""
    return x * scale + shift
