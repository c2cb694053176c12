"""The op, registered under a fixed namespace (the mistake the build checks catch)."""
import torch


@torch.library.custom_op("bad_registration::scale", mutates_args=())
def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return x * factor


@scale.register_fake
def _(x: torch.Tensor, factor: float) -> torch.Tensor:
    return torch.empty_like(x)
