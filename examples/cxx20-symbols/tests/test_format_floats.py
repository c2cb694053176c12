"""The cxx20-symbols example: std::to_chars's shortest round-trip text, checked by Python.

`kernel-builder test` puts the built variant on the path as `cxx20_symbols`.
"""
import pytest
import torch

from cxx20_symbols import format_floats


@pytest.mark.kernels_ci
def test_known_values():
    x = torch.tensor([0.1, 1.5, -2.0, 1e300, 5e-324, 0.0], dtype=torch.float64)
    assert format_floats(x) == ["0.1", "1.5", "-2", "1e+300", "5e-324", "0"]


@pytest.mark.kernels_ci
def test_round_trips_and_is_no_longer_than_python_repr():
    torch.manual_seed(0)
    x = torch.randn(2000, dtype=torch.float64) * torch.logspace(-30, 30, 2000,
                                                                dtype=torch.float64)
    texts = format_floats(x)
    assert [float(t) for t in texts] == x.tolist()
    # Both are shortest round-trip forms; Python may add ".0" or spell the exponent longer.
    assert all(len(t) <= len(repr(v)) for t, v in zip(texts, x.tolist()))


@pytest.mark.kernels_ci
def test_float32_input_is_widened():
    assert format_floats(torch.tensor([0.5, 0.25], dtype=torch.float32)) == ["0.5", "0.25"]


@pytest.mark.kernels_ci
def test_empty_input():
    assert format_floats(torch.empty(0)) == []
