"""dep-base's one function against plain torch."""
import pytest
import torch

from dep_base import scale_and_shift


@pytest.mark.kernels_ci
def test_scale_and_shift():
    x = torch.arange(6.0).reshape(2, 3)
    torch.testing.assert_close(scale_and_shift(x, 2.0, -1.0), x * 2.0 - 1.0)
