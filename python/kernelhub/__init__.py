# SPDX-License-Identifier: Apache-2.0
"""kernelhub: load Hugging Face Hub kernels, with a C++ core; the whole public API of the
reference package `kernels` (see `compat_version`), so moving is a change of one import.

Loads from the Hub, from the cache (HF_HUB_OFFLINE, locks) and from local builds; the variant
choice, downloads and cache checks run in the C++ core, only the import itself is Python.
Importing kernelhub does not import torch.
"""


from __future__ import annotations

import importlib
from pathlib import Path

from . import _kernelhub, _system
from ._loader import LoadedKernel, RepoInfo, loaded_kernels
from .deps import get_kernel_dep

# Public names whose modules are imported when first asked for: they define their classes by
# running code (dataclasses, enums), which made `import kernelhub` cost about 15 ms, twice a
# warm load, for a program that only calls get_kernel (the layer API alone ~3.7 ms, Metadata
# ~2.9 ms). `from kernelhub import kernelize` and `kernelhub.kernelize` work as before.
_LAZY = {
    "Benchmark": "benchmark",
    "Metadata": "_metadata",
    "VariantAccepted": "_variants",
    "VariantRejected": "_variants",
    **{name: "layer" for name in (
        "CUDAProperties", "Device", "FuncRepository", "KernelizeFallback", "LayerRepository",
        "LocalFuncRepository", "LocalLayerRepository", "LockedFuncRepository",
        "LockedLayerRepository", "Mode", "ROCMProperties", "kernelize",
        "register_kernel_mapping", "replace_kernel_forward_from_hub",
        "use_kernel_forward_from_hub", "use_kernel_func_from_hub", "use_kernel_mapping",
        "use_kernelized_func")},
}
# Submodules that were imported with the package, so `kernelhub.layer.X` worked without an
# import of its own.
_LAZY_SUBMODULES = ("benchmark", "layer")

__version__ = "0.1.0"
# The `kernels` release whose public API (names, signatures, behaviour, error texts) we match.
compat_version = _kernelhub.compat_version  # "0.17.2", defined once in the C++ core

__all__ = [
    "__version__",
    "compat_version",
    "Benchmark",
    "CUDAProperties",
    "Device",
    "KernelizeFallback",
    "ROCMProperties",
    "FuncRepository",
    "LayerRepository",
    "LoadedKernel",
    "LocalFuncRepository",
    "LocalLayerRepository",
    "LockedFuncRepository",
    "LockedLayerRepository",
    "Metadata",
    "Mode",
    "RepoInfo",
    "RepositoryNotFoundError",
    "RevisionNotFoundError",
    "VariantAccepted",
    "VariantRejected",
    "get_kernel",
    "get_kernel_dep",
    "get_kernel_variants",
    "get_loaded_kernels",
    "get_local_kernel",
    "get_local_kernel_variants",
    "get_locked_kernel",
    "has_kernel",
    "install_kernel",
    "kernelize",
    "load_kernel",
    "parse_local_kernels",
    "register_kernel_mapping",
    "replace_kernel_forward_from_hub",
    "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernel_mapping",
    "use_kernelized_func",
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # asked once: later lookups find it without this function
        return value
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    # The Hub error classes subclass huggingface_hub's, imported only when first asked for.
    if name in ("RepositoryNotFoundError", "RevisionNotFoundError"):
        from ._errors import error_class

        return error_class(name)
    raise AttributeError(f"module 'kernelhub' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_LAZY_SUBMODULES))


def _find(repo_path: Path | str, backend: str | None):
    cuda, rocm = _system.device_arch() if _system.arch_matters(backend) else (None, None)
    return _kernelhub.find_local_variant(
        Path(repo_path), _system.probe(_system.needs_device(backend)), backend, cuda, rocm
    )


def get_local_kernel_variants(
    repo_path: Path | str, backend: str | None = None
) -> list[VariantAccepted | VariantRejected]:
    """The decision trace for a local kernel, best first (like `kernels.get_kernel_variants`);
    empty when `repo_path` is itself a variant."""
    from ._variants import decisions

    _path, trace, _text = _find(repo_path, backend)
    return decisions(trace)


def get_loaded_kernels() -> list[LoadedKernel]:
    """A copy of the registry: one entry per distinct variant path, in load order."""
    return loaded_kernels()


def parse_local_kernels(text: str) -> dict[str, Path]:
    """LOCAL_KERNELS ("org/a=/path/a:org/b=/path/b") as a dict; ValueError as the reference."""
    return {repo_id: Path(path) for repo_id, path in _kernelhub.parse_local_kernels(text)}


from ._hub import (  # noqa: E402  (after _find and parse_local_kernels, which it uses)
    get_kernel,
    get_kernel_variants,
    get_local_kernel,
    get_locked_kernel,
    has_kernel,
    install_kernel,
    load_kernel,
)
