"""The kernel's global C++ state round-trips through its ops.

`kernel-builder test` puts the built variant on the path as `same_globals_a`. The test of
its twin, same-globals-b, is this file with the other name; the e2e test
tests/e2e/test_build_isolation.py loads both into one process.
"""
import pytest

from same_globals_a import get_values, set_values


@pytest.mark.kernels_ci
def test_values_round_trip():
    set_values(11, 22, 33)
    assert get_values() == [11, 22, 33]
    set_values(-1, 0, 2**40)
    assert get_values() == [-1, 0, 2**40]


@pytest.mark.kernels_ci
def test_each_value_is_its_own_variable():
    set_values(1, 2, 3)
    set_values(4, 2, 3)
    assert get_values() == [4, 2, 3]
    set_values(4, 5, 3)
    assert get_values() == [4, 5, 3]
