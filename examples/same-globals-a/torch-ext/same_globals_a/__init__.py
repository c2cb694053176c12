"""same-globals-a: global C++ state that same-globals-b defines under the same names."""
from typing import List

from ._ops import ops

__all__ = ["get_values", "set_values"]


def set_values(global_value: int, local_value: int, member_value: int) -> None:
    """Sets the namespace-scope global, the function-local static and the class static."""
    ops.set_values(global_value, local_value, member_value)


def get_values() -> List[int]:
    """Reads back [global, function-local static, class static]."""
    return list(ops.get_values())
