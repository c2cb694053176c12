"""The op as a function, and its fake implementation for torch.compile and FakeTensor."""
from typing import Optional

import torch

from ._ops import add_op_namespace_prefix, ops


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, unsqueeze_dim: int = 1,
                 interleaved: bool = False, reverse: bool = False,
                 out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`x * cos + rotate_half(x) * sin` after `cos.unsqueeze(unsqueeze_dim)` (and sin's), as
    transformers' apply_rotary_pos_emb computes it for one of q and k.

    x's last dimension pairs up as halves (x1, x2), or with `interleaved` as neighbours
    (x[..., 0::2], x[..., 1::2]); `rotate_half` maps each pair (a, b) to (-b, a), or to (b, -a)
    when `reverse`. cos and sin must broadcast to x but for the last dimension, which is x's or
    half of it (one angle per pair). The result has the dtype torch promotes x and cos to."""
    dtype = torch.promote_types(x.dtype, cos.dtype)
    x = x.to(dtype).contiguous()
    cos = cos.unsqueeze(unsqueeze_dim).to(dtype)
    sin = sin.unsqueeze(unsqueeze_dim).to(dtype)
    # Views with stride 0 along the broadcast dimensions: nothing is copied.
    shape = (*x.shape[:-1], cos.shape[-1])
    cos = cos.expand(shape)
    sin = sin.expand(shape)
    if out is None:
        out = torch.empty_like(x)
    ops.apply_rotary(out, x, cos, sin, interleaved, reverse)
    return out


# The op only writes into `out`, so tracing needs nothing computed: this lets torch.compile (and
# FakeTensorMode) run through it without calling the CPU code.
@torch.library.register_fake(add_op_namespace_prefix("apply_rotary"))
def _apply_rotary_fake(out: torch.Tensor, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                       interleaved: bool, reverse: bool) -> None:
    torch._check(cos.shape[-1] * 2 == x.shape[-1] or cos.shape[-1] == x.shape[-1],
                 lambda: "apply_rotary: cos must have x's last dimension or half of it")
