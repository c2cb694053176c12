# SPDX-License-Identifier: Apache-2.0
"""`kernels.importer`: importing a variant and the registry of loaded kernels.

- `_import_from_path(variant_path, deps)`: `kernelhub._loader.import_variant` (the import every
  kernelhub load ends in).
- `_loaded_kernels`: kernelhub's registry (`kernelhub.get_loaded_kernels`, kept in the C++
  core) as a mapping from variant path: `pop`/`clear` are
  `kernelhub._loader.forget_loaded_kernel`, `update` with records taken from it is
  `kernelhub._loader.restore_loaded_kernel`.
- `LoadedKernel`: `kernelhub.LoadedKernel`.
"""
from __future__ import annotations

from pathlib import Path

import kernelhub
from kernelhub import LoadedKernel
from kernelhub import _kernelhub
from kernelhub._loader import forget_loaded_kernel, import_variant, restore_loaded_kernel

__all__ = ["LoadedKernel", "_import_from_path", "_loaded_kernels", "get_loaded_kernels"]

get_loaded_kernels = kernelhub.get_loaded_kernels


def _import_from_path(variant_path: Path, deps: dict | None = None, repo_info=None):
    return import_variant(Path(variant_path), repo_info, deps=deps or {})


class _Registry:
    def _entries(self) -> dict:
        # registry_list and get_loaded_kernels both list the registry in load order
        paths = [Path(entry["variant_path"]) for entry in _kernelhub.registry_list()]
        return dict(zip(paths, kernelhub.get_loaded_kernels()))

    def __contains__(self, variant_path) -> bool:
        return _kernelhub.registry_find(Path(variant_path)) is not None

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
        record = self._entries().get(Path(variant_path))
        if not forget_loaded_kernel(Path(variant_path)):
            if default:
                return default[0]
            raise KeyError(variant_path)
        return record

    def clear(self) -> None:
        for variant_path in list(self._entries()):
            forget_loaded_kernel(variant_path)

    def update(self, other) -> None:
        for variant_path, record in dict(other).items():
            restore_loaded_kernel(Path(variant_path), record)


_loaded_kernels = _Registry()
