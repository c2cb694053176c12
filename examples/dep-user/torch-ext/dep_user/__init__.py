"""dep-user: a kernel built on another kernel, dep-base, declared in build.toml's
kernel-depends and handed over by the loader while this package is imported."""
import torch

from ._dependencies import kernel_dependency

__all__ = ["affine_twice", "base"]

# Only works now, during the import: the loader exposes the dependencies for its duration.
base = kernel_dependency("kernelhub-examples/dep-base")


def affine_twice(x: torch.Tensor, scale: float, shift: float) -> torch.Tensor:
    """dep-base's `scale_and_shift` applied twice."""
    return base.scale_and_shift(base.scale_and_shift(x, scale, shift), scale, shift)
