# SPDX-License-Identifier: Apache-2.0
"""`kernels.deps`: kernel-depends trees and `get_kernel_dep`.

- `get_kernel_dep`: `kernelhub.deps.get_kernel_dep`.
- `use_kernel_deps(mapping)`: sets what `get_kernel_dep` answers, through kernelhub's own
  context variable (`kernelhub.deps._KERNEL_DEPS`, which kernelhub's loader sets while a kernel
  is imported).
- `resolve_kernel_tree(api, backend, kernel, resolver)`: kernelhub's tree walk,
  `kernelhub._hub.walk_kernel_tree` (depth first, a dependency already on the path is a cycle),
  each node located by the caller's resolver; `DepTreeNode` holds the nodes.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from kernelhub._hub import walk_kernel_tree
from kernelhub.data import KernelVersion
from kernelhub.deps import _KERNEL_DEPS, get_kernel_dep

__all__ = ["DepTreeNode", "get_kernel_dep", "resolve_kernel_tree", "use_kernel_deps"]


@dataclass
class DepTreeNode:
    location: object
    deps: dict = field(default_factory=dict)

    def validate_metadata(self, validator) -> None:
        """`validator` on this node, then on its dependencies, depth first."""
        validator.validate_metadata(metadata=self.location.metadata,
                                    variant=self.location.variant_str)
        for child in self.deps.values():
            child.validate_metadata(validator)


@contextmanager
def use_kernel_deps(deps: dict):
    token = _KERNEL_DEPS.set(dict(deps))
    try:
        yield
    finally:
        _KERNEL_DEPS.reset(token)


def _spec(kernel) -> tuple:
    if isinstance(kernel.version, KernelVersion.Version):
        return kernel.repo_id, kernel.version.version, None
    return kernel.repo_id, None, kernel.version.revision


def _dependency(spec: tuple):
    from kernelhub.data import KernelDependency

    repo_id, version, revision = spec
    return KernelDependency(repo_id, KernelVersion.Version(version) if version is not None
                            else KernelVersion.Revision(revision))


def resolve_kernel_tree(*, api, backend, kernel, resolver=None) -> DepTreeNode:
    def locate(spec):
        location = resolver.resolve(api=api, backend=backend, kernel=_dependency(spec)) \
            if resolver is not None else None
        if location is None:
            repo_id, version, revision = spec
            pinned = f"version: {version}" if version is not None else f"revision: {revision}"
            raise ValueError(f"Could not resolve kernel {repo_id} ({pinned})")
        return location

    def depends_of(location) -> list[tuple]:
        return [_spec(dependency) for dependency in location.metadata.kernel_depends]

    return walk_kernel_tree(_spec(kernel), locate, locate, depends_of,
                            lambda location, deps: DepTreeNode(location=location, deps=deps))
