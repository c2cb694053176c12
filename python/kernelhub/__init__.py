# SPDX-License-Identifier: Apache-2.0
"""kernelhub: load Hugging Face Hub kernels, with a C++ core (the reference is `kernels`).

Loads from the Hub, from the cache (HF_HUB_OFFLINE, locks) and from local builds; the variant
choice, downloads and cache checks run in the C++ core, only the import itself is Python.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import _kernelhub, _system
from ._loader import LoadedKernel, Metadata, RepoInfo, import_variant, loaded_kernels

__all__ = [
    "LoadedKernel",
    "Metadata",
    "RepoInfo",
    "VariantAccepted",
    "VariantRejected",
    "get_kernel",
    "get_kernel_variants",
    "get_loaded_kernels",
    "get_local_kernel",
    "get_local_kernel_variants",
    "get_locked_kernel",
    "has_kernel",
    "install_kernel",
    "load_kernel",
    "parse_local_kernels",
]

__version__ = "0.1.0"


@dataclass(frozen=True)
class VariantAccepted:
    variant: str


@dataclass(frozen=True)
class VariantRejected:
    variant: str
    reason: str


def _find(repo_path: Path | str, backend: str | None):
    cuda, rocm = _system.device_arch()
    return _kernelhub.find_local_variant(
        Path(repo_path), _system.probe_json(), backend, cuda, rocm
    )


def get_local_kernel(repo_path: Path | str, backend: str | None = None) -> ModuleType:
    """Imports the variant of a local kernel that fits this machine: variant folders in
    `repo_path`, then in `repo_path/build`, else `repo_path` itself. The module is named after
    the metadata id, so several builds of one kernel load side by side."""
    variant_path, _trace, _text = _find(repo_path, backend)
    return import_variant(Path(variant_path))


def get_local_kernel_variants(
    repo_path: Path | str, backend: str | None = None
) -> list[VariantAccepted | VariantRejected]:
    """The decision trace for a local kernel, best first (like `kernels.get_kernel_variants`);
    empty when `repo_path` is itself a variant."""
    _path, trace, _text = _find(repo_path, backend)
    return [
        VariantAccepted(name) if reason is None else VariantRejected(name, reason)
        for name, reason in trace
    ]


def get_loaded_kernels() -> list[LoadedKernel]:
    """A copy of the registry: one entry per distinct variant path, in load order."""
    return loaded_kernels()


def parse_local_kernels(text: str) -> dict[str, Path]:
    """LOCAL_KERNELS ("org/a=/path/a:org/b=/path/b") as a dict; ValueError as the reference."""
    return {repo_id: Path(path) for repo_id, path in _kernelhub.parse_local_kernels(text)}


def _local_override(repo_id: str) -> Path | None:
    text = os.environ.get("LOCAL_KERNELS")
    if text is None:
        return None
    return parse_local_kernels(text).get(repo_id)


from ._hub import (  # noqa: E402  (after _local_override, which get_kernel uses)
    get_kernel,
    get_kernel_variants,
    get_locked_kernel,
    has_kernel,
    install_kernel,
    load_kernel,
)
