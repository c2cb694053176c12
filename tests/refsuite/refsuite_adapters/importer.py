# SPDX-License-Identifier: Apache-2.0
"""`kernels.importer`: importing a variant and the registry of loaded kernels.

- `_import_from_path(variant_path, deps)`: `kernelhub._loader.import_variant` (the import every
  kernelhub load ends in).
- `_loaded_kernels`: a read view of kernelhub's registry (`kernelhub.get_loaded_kernels`, kept
  in the C++ core), keyed by variant path. kernelhub's registry only grows: `pop` and `clear`
  of a loaded kernel are refused (TypeError), not faked.
- `LoadedKernel`: `kernelhub.LoadedKernel`.
"""
from __future__ import annotations

from pathlib import Path

import kernelhub
from kernelhub import LoadedKernel
from kernelhub._loader import import_variant

__all__ = ["LoadedKernel", "_import_from_path", "_loaded_kernels", "get_loaded_kernels"]

get_loaded_kernels = kernelhub.get_loaded_kernels


def _import_from_path(variant_path: Path, deps: dict | None = None, repo_info=None):
    return import_variant(Path(variant_path), repo_info, deps=deps or {})


class _Registry:
    def _entries(self) -> dict:
        return {Path(entry.variant_path): entry for entry in kernelhub.get_loaded_kernels()}

    def __contains__(self, variant_path) -> bool:
        return Path(variant_path).resolve() in {p.resolve() for p in self._entries()}

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self):
        return iter(self._entries())

    def keys(self):
        return self._entries().keys()

    def values(self):
        return self._entries().values()

    def items(self):
        return self._entries().items()

    def copy(self) -> dict:
        return self._entries()

    def pop(self, variant_path, *default):
        if variant_path not in self:
            if default:
                return default[0]
            raise KeyError(variant_path)
        raise TypeError("kernelhub's registry of loaded kernels cannot forget a kernel")

    def clear(self) -> None:
        if len(self):
            raise TypeError("kernelhub's registry of loaded kernels cannot forget a kernel")

    def update(self, other) -> None:
        missing = [path for path in dict(other) if path not in self]
        if missing:
            raise TypeError("kernelhub's registry of loaded kernels is filled by loads only")


_loaded_kernels = _Registry()
