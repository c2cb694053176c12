# SPDX-License-Identifier: Apache-2.0
"""`get_kernel_dep`: a kernel's own code, while it is imported, gets the kernels it depends on
(`kernel-depends` in build.toml, layers.md §9.3)."""


from contextvars import ContextVar
from types import ModuleType

# The direct dependencies of the kernel being imported, by repo id; None outside an import.
_KERNEL_DEPS: ContextVar[dict[str, ModuleType] | None] = ContextVar("_KERNEL_DEPS", default=None)


def get_kernel_dep(repo_id: str) -> ModuleType:
    """The module of `repo_id`, a direct dependency of the kernel now being imported."""
    deps = _KERNEL_DEPS.get()
    if deps is None:
        raise RuntimeError("`get_kernel_dep` only works during kernel loading.")
    module = deps.get(repo_id)
    if module is None:
        raise RuntimeError(
            f"Dependency '{repo_id}' not found in kernel dependencies. Ensure the dependency is "
            "added to `kernel-deps` in build.toml.")
    return module
