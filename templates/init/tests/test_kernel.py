"""Checks {{ kernel_name }} against PyTorch's own SiLU on the device this build serves."""
import pytest
import torch
import torch.nn.functional as F

from {{ kernel_name_normalized }} import {{ kernel_name_normalized }}

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SHAPES = [(1,), (7,), (33, 1000), (3, 5, 257)]


def _device() -> str | None:
    """The first device this kernel has a backend for that is present here.

    A build of the kernel registers its operator for one device type only, so the tests run
    on the device its variant was built for, as the loader would pick it.
    """
{% if has_cuda or has_rocm %}
    if torch.cuda.is_available():
        return "cuda"
{% endif %}
{% if has_xpu %}
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return "xpu"
{% endif %}
{% if has_metal %}
    if torch.backends.mps.is_available():
        return "mps"
{% endif %}
{% if has_cpu %}
    return "cpu"
{% else %}
    return None
{% endif %}


@pytest.fixture
def device() -> str:
    found = _device()
    if found is None:
        pytest.skip("none of this kernel's devices ({{ backends | join(", ") }}) is present")
    return found


@pytest.mark.kernels_ci
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_matches_torch(device, dtype, shape):
    torch.manual_seed(0)
    x = torch.randn(shape, device=device, dtype=dtype) * 4
    expected = F.silu(x.float()).to(dtype)
    torch.testing.assert_close({{ kernel_name_normalized }}(x), expected)


@pytest.mark.kernels_ci
def test_writes_into_out(device):
    x = torch.randn(64, device=device)
    out = torch.full_like(x, float("nan"))
    result = {{ kernel_name_normalized }}(x, out=out)
    assert result is out
    torch.testing.assert_close(out, F.silu(x))


@pytest.mark.kernels_ci
def test_empty_input(device):
    x = torch.empty(0, 3, device=device)
    assert {{ kernel_name_normalized }}(x).shape == (0, 3)


@pytest.mark.kernels_ci
def test_rejects_mismatched_out(device):
    x = torch.randn(8, device=device)
    with pytest.raises(RuntimeError):
        {{ kernel_name_normalized }}(x, out=torch.empty(4, device=device))
