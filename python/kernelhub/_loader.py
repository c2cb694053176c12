# SPDX-License-Identifier: Apache-2.0
"""Importing a chosen variant directory under its module name (loader.md §3.1-3.2)."""

from __future__ import annotations


import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import _bytecode, _kernelhub, _system
from .deps import _KERNEL_DEPS


@dataclass(frozen=True)
class RepoInfo:
    repo_id: str
    revision: str


@dataclass(frozen=True)
class LoadedKernel:
    """One loaded variant: its metadata (None for builds older than metadata ids), the module
    and, for Hub loads, where it came from. kernels' dataclass field for field; where the
    variant was imported from is a property (`variant_path`), not a field."""

    metadata: Metadata  # None for builds older than metadata ids
    module: ModuleType
    repo_info: RepoInfo | None

    @property
    def variant_path(self) -> Path | None:
        """The variant folder it was imported from (None when built by hand)."""
        return self.__dict__.get("_variant_path")

    @property
    def module_name(self) -> str:
        """Its name in sys.modules and the torch.ops namespace: the metadata id."""
        return self.module.__name__


def _loaded_kernel(metadata, module, repo_info, variant_path: Path) -> LoadedKernel:
    kernel = LoadedKernel(metadata=metadata, module=module, repo_info=repo_info)
    object.__setattr__(kernel, "_variant_path", variant_path)  # frozen: set once, here
    return kernel


_lock = threading.RLock()
_modules: dict[str, ModuleType] = {}


# --- imports from source only ------------------------------------------------------------------
#
# A variant's digest (and so its signature) covers its sources and libraries but not bytecode:
# `__pycache__/` and `*.pyc` are skipped, as the reference skips them. Python's own finders
# prefer a cached .pyc over the source (an unchecked-hash .pyc is used without looking at the
# source at all), and import a lone `x.pyc` where no `x.py` exists. So the modules of a variant
# are found by a finder of our own, for every folder inside a loaded variant: it knows
# extension modules and sources only, and takes each module's code from the source it reads
# at import time; nothing is written into the variant. Anyone who can write the cache can still
# drop bytecode there; nothing runs it. What compiling costs is won back by _bytecode: code the
# loader compiled itself, kept in this user's state folder under the hash of the source.


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """Code from the source read now: never the variant's bytecode, and none written there."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return _bytecode.compile_source(self.get_data(path), path)


_LOADERS = ((importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
            (_SourceLoader, importlib.machinery.SOURCE_SUFFIXES))
_variant_roots: set[str] = set()


def _inside_variant(path: str) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in _variant_roots)


class _VariantFinder(importlib.machinery.FileFinder):
    """A FileFinder without bytecode loaders, which finds nothing in or as a __pycache__."""

    def __init__(self, path: str):
        super().__init__(path, *_LOADERS)
        self._in_cache_folder = "__pycache__" in Path(path).parts

    def find_spec(self, fullname, target=None):
        if self._in_cache_folder or fullname.rpartition(".")[2] == "__pycache__":
            return None
        return super().find_spec(fullname, target)


def _variant_path_hook(path: str):
    """Ours for the folders of loaded variants; every other folder is left to the next hook."""
    absolute = os.path.abspath(path)
    if _inside_variant(absolute):
        return _VariantFinder(absolute)
    raise ImportError("not a folder of a loaded kernel variant")


def _real_path(path: str) -> str:
    return _kernelhub.real_path(path) or os.path.realpath(path)


def _claim_variant(*folders: Path) -> None:
    """Sends imports from `folders` (and below) through _VariantFinder, dropping any finder
    Python cached for them before."""
    absolute = {os.path.abspath(folder) for folder in folders}
    new = (absolute | {_real_path(folder) for folder in absolute}) - _variant_roots
    if _variant_path_hook not in sys.path_hooks:
        sys.path_hooks.insert(0, _variant_path_hook)
    if not new:
        return
    _variant_roots.update(new)
    # Most entries are absolute already: a prefix test first, the normalisation only for a hit
    # or a relative entry (a load costs no abspath per cached folder).
    prefixes = tuple(new)
    for cached in list(sys.path_importer_cache):
        if not isinstance(cached, str):
            continue
        if cached.startswith("/") and not cached.startswith(prefixes):
            continue
        if _inside_variant(os.path.abspath(cached)) and \
                not isinstance(sys.path_importer_cache.get(cached), _VariantFinder):
            sys.path_importer_cache.pop(cached, None)


def validate_dependencies(python_name: str, depends: list[str]) -> None:
    """python-depends (loader.md §3.4): names from the curated table, their modules importable."""
    if not depends:
        return  # most kernels: nothing to look up (the table and the probe cost ~50 us cold)
    for _package, import_name, message in _kernelhub.required_imports(
        python_name, depends, _system.probe(device=False)
    ):
        if importlib.util.find_spec(import_name) is None:
            raise ImportError(message)


# kernels logs the dirty-build warning on `kernels.validate`; ours on the same spot of our tree.
_validate_logger = logging.getLogger("kernelhub.validate")


def validate_variant(variant_path: str | Path, info: dict) -> None:
    """The checks kernels runs on every node of a kernel-depends tree before importing any of
    it, in its order: python-depends, then kernels-minver against compat_version (RuntimeError),
    then a build from a dirty git tree (a warning on the `kernelhub.validate` logger). Run on
    every load, a repeated one included, as kernels does."""
    if not info["has_metadata"]:
        return
    validate_dependencies(info["python_name"], info["python_depends"])
    # compat_version as the package has it now (kernels reads its __version__ at each check)
    package = sys.modules.get(__package__)
    _kernelhub.check_kernels_minver(
        info["module"], getattr(package, "compat_version", _kernelhub.compat_version))
    if info["dirty_build"] is not None:
        _validate_logger.warning(info["dirty_build"])


def _reference_deps_var():
    """kernels' own `_KERNEL_DEPS`, so a kernel that calls `kernels.get_kernel_dep` finds its
    dependencies when we load it; imported only for kernels that have dependencies."""
    module = sys.modules.get("kernels.deps")
    if module is None:
        if importlib.util.find_spec("kernels") is None:
            return None
        try:
            import kernels.deps as module
        except Exception:  # a broken reference install must not break our load
            return None
    return getattr(module, "_KERNEL_DEPS", None)


def import_variant(variant_path: str | Path, repo_info: RepoInfo | None = None,
                   deps: dict[str, ModuleType] | None = None, info: dict | None = None
                   ) -> ModuleType:
    """Imports the variant under its metadata id (once per variant path), after the caller has
    run validate_variant. While its __init__.py runs, `get_kernel_dep` answers from `deps`: the
    direct dependencies, already imported."""
    with _lock:
        found = _kernelhub.registry_find(variant_path)
        if found is not None:
            return _modules[str(found)]
        if info is None:
            info = _kernelhub.resolve_kernel_module(variant_path)
        for message in info["warnings"]:
            warnings.warn(message, UserWarning, stacklevel=3)
        name = info["module_name"]
        entry = info["entry_file"]
        package = os.path.dirname(entry)
        _claim_variant(variant_path, package)
        spec = importlib.util.spec_from_file_location(
            name, entry, loader=_SourceLoader(name, entry), submodule_search_locations=[package]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load spec for {name} from {entry}")
        module = importlib.util.module_from_spec(spec)
        # Registered before running, so the kernel's relative imports resolve under its name.
        sys.modules[name] = module
        tokens = [(_KERNEL_DEPS, _KERNEL_DEPS.set(dict(deps or {})))]
        if deps:
            reference = _reference_deps_var()
            if reference is not None:
                tokens.append((reference, reference.set(dict(deps))))
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            sys.modules.pop(name, None)
            # kernels' note, naming the kernel (and for Hub loads where it came from).
            kernel = info["name"] or info["python_name"]
            origin = (f"({repo_info.repo_id}, revision: {repo_info.revision})" if repo_info
                      else "")
            if hasattr(error, "add_note"):  # Python 3.11 and later
                error.add_note(f"while importing kernel '{kernel}', variant "
                               f"'{Path(variant_path).name}' {origin}")
            raise
        except BaseException:
            sys.modules.pop(name, None)
            raise
        finally:
            for var, token in reversed(tokens):
                var.reset(token)
        path = _kernelhub.registry_add(
            info["module"],
            repo_info.repo_id if repo_info else None,
            repo_info.revision if repo_info else None,
        )
        _modules[str(path)] = module
        return module


def loaded_kernels() -> list[LoadedKernel]:
    from ._metadata import Metadata  # its classes cost ~3 ms to define: not on every import

    with _lock:
        out = []
        for entry in _kernelhub.registry_list():
            metadata_json = entry["metadata_json"]
            repo_info = entry["repo_info"]
            path = str(entry["variant_path"])
            out.append(_loaded_kernel(
                Metadata.from_json(metadata_json) if metadata_json else None, _modules[path],
                RepoInfo(*repo_info) if repo_info else None, Path(path)))
        return out


def forget_loaded_kernel(variant_path: Path) -> bool:
    """Removes a variant from the registry, so the next load of that path imports it again
    (after a local rebuild, say); its module object is left to whoever holds it. False when
    the path was not loaded."""
    with _lock:
        found = _kernelhub.registry_find(variant_path)
        if found is None:
            return False
        _kernelhub.registry_remove(found)
        _modules.pop(str(found), None)
        return True


def restore_loaded_kernel(variant_path: Path, record: LoadedKernel) -> None:
    """Puts back the record of `variant_path` that `loaded_kernels()` gave before it was
    forgotten (its module, not a new import)."""
    with _lock:
        if _kernelhub.registry_find(variant_path) is not None:
            return
        repo_info = record.repo_info
        module = _kernelhub.resolve_kernel_module(variant_path)["module"]
        path = _kernelhub.registry_add(module,
                                       repo_info.repo_id if repo_info else None,
                                       repo_info.revision if repo_info else None)
        _modules[str(path)] = record.module
