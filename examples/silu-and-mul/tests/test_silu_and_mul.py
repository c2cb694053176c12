"""The silu-and-mul example (a Python custom op) against plain torch."""
import pytest
import torch
import torch.nn.functional as F

from silu_and_mul import silu_and_mul
from silu_and_mul._ops import add_op_namespace_prefix


def reference(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return F.silu(x[..., :half]) * x[..., half:]


@pytest.mark.kernels_ci
@pytest.mark.parametrize("shape", [(2, 8), (3, 5, 64), (1, 2)])
def test_matches_torch(shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    torch.testing.assert_close(silu_and_mul(x), reference(x))


@pytest.mark.kernels_ci
def test_op_is_registered_under_the_kernel_namespace():
    namespace, name = add_op_namespace_prefix("silu_and_mul").split("::")
    assert namespace.startswith("_silu_and_mul_")
    op = getattr(getattr(torch.ops, namespace), name)
    x = torch.randn(4, 6)
    torch.testing.assert_close(op(x), reference(x))



@pytest.mark.kernels_ci
def test_fake_registration_gives_shapes_without_computing():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(3, 5, 64)
        out = silu_and_mul(x)
    assert out.shape == (3, 5, 32) and out.dtype == x.dtype
    meta = silu_and_mul(torch.empty(2, 10, device="meta"))
    assert meta.shape == (2, 5) and meta.device.type == "meta"
    # torch.library's own checker runs the fake against the real kernel.
    namespace, name = add_op_namespace_prefix("silu_and_mul").split("::")
    torch.library.opcheck(getattr(getattr(torch.ops, namespace), name), (torch.randn(4, 6),))
