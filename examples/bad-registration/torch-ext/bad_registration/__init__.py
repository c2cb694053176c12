"""bad-registration: an example kernel that `kernel-builder build` must refuse."""
from .ops import scale

__all__ = ["scale"]
