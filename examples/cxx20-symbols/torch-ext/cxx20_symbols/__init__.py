"""cxx20-symbols: an example kernel built on C++17/20 library functions (std::to_chars, pmr)."""
from typing import List

import torch

from ._ops import ops

__all__ = ["format_floats"]


def format_floats(x: torch.Tensor) -> List[str]:
    """The shortest text of each element (as float64) that parses back to the same value."""
    return list(ops.format_floats(x))
