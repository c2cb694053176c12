# SPDX-License-Identifier: Apache-2.0
"""Importing a chosen variant directory under its module name (loader.md §3.1-3.2)."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import _kernelhub, _system


@dataclass(frozen=True)
class Metadata:
    """A variant's metadata.json (kebab-case keys as snake_case attributes)."""

    id: str
    name: str
    version: int
    license: str
    python_depends: list[str]
    backend: str
    archs: list[str] | None
    upstream: str | None
    source: str | None
    raw: dict

    @staticmethod
    def from_json(text: str) -> "Metadata":
        data = json.loads(text)
        backend = data.get("backend", {})
        return Metadata(
            id=data["id"],
            name=data["name"],
            version=data["version"],
            license=data["license"],
            python_depends=list(data.get("python-depends", [])),
            backend=backend.get("type"),
            archs=backend.get("archs"),
            upstream=data.get("upstream"),
            source=data.get("source"),
            raw=data,
        )


@dataclass(frozen=True)
class RepoInfo:
    repo_id: str
    revision: str


@dataclass(frozen=True)
class LoadedKernel:
    """One loaded variant: its metadata (None for builds older than metadata ids), the module
    and, for Hub loads, where it came from."""

    metadata: Metadata | None
    module: ModuleType
    repo_info: RepoInfo | None
    variant_path: Path
    module_name: str


_lock = threading.RLock()
_modules: dict[str, ModuleType] = {}


def validate_dependencies(python_name: str, depends: list[str]) -> None:
    """python-depends (loader.md §3.4): names from the curated table, their modules importable."""
    for _package, import_name, message in _kernelhub.required_imports(
        python_name, depends, _system.probe_json()
    ):
        if importlib.util.find_spec(import_name) is None:
            raise ImportError(message)


def import_variant(variant_path: Path, repo_info: RepoInfo | None = None) -> ModuleType:
    with _lock:
        found = _kernelhub.registry_find(variant_path)
        if found is not None:
            return _modules[str(found)]
        info = _kernelhub.resolve_kernel_module(variant_path)
        for message in info["warnings"]:
            warnings.warn(message, UserWarning, stacklevel=3)
        if info["metadata_json"] is not None:
            metadata = Metadata.from_json(info["metadata_json"])
            validate_dependencies(info["python_name"], metadata.python_depends)
        name = info["module_name"]
        entry = Path(info["entry_file"])
        spec = importlib.util.spec_from_file_location(
            name, entry, submodule_search_locations=[str(entry.parent)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load spec for {name} from {entry}")
        module = importlib.util.module_from_spec(spec)
        # Registered before running, so the kernel's relative imports resolve under its name.
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        path = _kernelhub.registry_add(
            variant_path,
            repo_info.repo_id if repo_info else None,
            repo_info.revision if repo_info else None,
        )
        _modules[str(path)] = module
        return module


def loaded_kernels() -> list[LoadedKernel]:
    with _lock:
        out = []
        for entry in _kernelhub.registry_list():
            metadata_json = entry["metadata_json"]
            repo_info = entry["repo_info"]
            path = str(entry["variant_path"])
            out.append(
                LoadedKernel(
                    metadata=Metadata.from_json(metadata_json) if metadata_json else None,
                    module=_modules[path],
                    repo_info=RepoInfo(*repo_info) if repo_info else None,
                    variant_path=Path(path),
                    module_name=entry["module_name"],
                )
            )
        return out
