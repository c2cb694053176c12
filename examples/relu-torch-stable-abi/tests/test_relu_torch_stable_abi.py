import pytest
import torch

import relu_torch_stable_abi


@pytest.mark.kernels_ci
def test_relu_matches_torch():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(1000, device=device)
    torch.testing.assert_close(relu_torch_stable_abi.relu(x), torch.relu(x))
