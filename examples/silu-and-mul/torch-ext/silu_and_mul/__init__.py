"""silu-and-mul: an example noarch kernel; the op is registered in Python with torch.library."""
import torch

from ._ops import add_op_namespace_prefix

__all__ = ["silu_and_mul"]


@torch.library.custom_op(add_op_namespace_prefix("silu_and_mul"), mutates_args=())
def _silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :half]) * x[..., half:]


@_silu_and_mul.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    # Shapes only (FakeTensor, meta, torch.compile tracing): the last dimension halves.
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """SiLU of the first half of the last dimension times its second half."""
    return _silu_and_mul(x)
