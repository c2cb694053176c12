"""dep-user loaded as a loader loads it, so that its import can ask for dep-base.

Importing the package directly would fail: `get_kernel_dep` only answers while a loader
imports the kernel. `kernel-builder test` puts the variant on the path as `dep_user`; these
tests find its folder there and load it with `kernels.get_local_kernel`, which fetches
dep-base through LOCAL_KERNELS (`kernelhub-examples/dep-base=<a dep-base build>`).
"""
import importlib.util
import os
from pathlib import Path

import pytest
import torch

DEPENDENCY = "kernelhub-examples/dep-base"

pytestmark = pytest.mark.skipif(
    f"{DEPENDENCY}=" not in os.environ.get("LOCAL_KERNELS", ""),
    reason=f"set LOCAL_KERNELS={DEPENDENCY}=<a dep-base build> to load dep-user's dependency")


@pytest.fixture(scope="module")
def dep_user():
    kernels = pytest.importorskip("kernels")
    spec = importlib.util.find_spec("dep_user")
    assert spec is not None and spec.submodule_search_locations, "dep_user is not on the path"
    variant = Path(next(iter(spec.submodule_search_locations))).resolve().parent
    return kernels.get_local_kernel(variant)


@pytest.mark.kernels_ci
def test_the_dependency_is_dep_base(dep_user):
    assert dep_user.base.NAME == "dep-base"


@pytest.mark.kernels_ci
def test_affine_twice(dep_user):
    x = torch.linspace(-2, 2, 9)
    torch.testing.assert_close(dep_user.affine_twice(x, 3.0, 0.5), (x * 3.0 + 0.5) * 3.0 + 0.5)
