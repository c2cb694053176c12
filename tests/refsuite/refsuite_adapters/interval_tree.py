# SPDX-License-Identifier: Apache-2.0
"""`kernels.layer._interval_tree`: the capability ranges of a cuda/rocm kernel mapping.

kernelhub keeps them in `kernelhub.layer.repos._CapabilityRepos` (a dict keyed by range, the
narrowest containing range wins, the last registered among equally narrow ones); the
reference keeps an AVL tree that breaks such ties by `id()`. `IntervalTree` here is that
container: `insert` is `_CapabilityRepos.insert`'s keying, `find_smallest_interval` its `find`,
`search` every range containing the point. There is no tree, so no `root`/`_Node`.
"""
from __future__ import annotations

from typing import Generic, TypeVar

from kernelhub.layer.device import CUDAProperties, Device
from kernelhub.layer.repos import _CapabilityRepos

T = TypeVar("T")


class IntervalTree(Generic[T]):
    def __init__(self):
        self._repos = _CapabilityRepos("cuda", CUDAProperties)

    def insert(self, start: int, end: int, data: T) -> None:
        self._repos.insert(Device("cuda", CUDAProperties(min_capability=start,
                                                         max_capability=end)), data)

    def find_smallest_interval(self, point: int) -> T | None:
        return self._repos.find(point)

    def search(self, point: int) -> list[T]:
        return [data for (low, high), data in self._repos.repos_by_capability.items()
                if low <= point <= high]



class _Node(Generic[T]):
    """The reference's tree node type, named here only because the tests' balance helper
    annotates with it. kernelhub keeps no tree: `IntervalTree` has no `root`, so the balance
    checks fail (docs/moving-from-kernels.md)."""
