# SPDX-License-Identifier: Apache-2.0
"""The deprecated function repositories: a Hub or local kernel's function wrapped as a layer
(layers.md §2.4, §7.5). They log their deprecation on construction, as kernels 0.17.2 does."""

import functools
import logging
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, Type

from .layer import (
    _as_path,
    _copied_trust,
    _create_func_module,
    _hashable_trust,
    load_backend_kwargs,
    use_kernel_forward_from_hub,
)
from .repos import RepositoryProtocol

if TYPE_CHECKING:
    from torch import nn

logger = logging.getLogger(__name__)


class FuncRepositoryProtocol(RepositoryProtocol, Protocol):
    @property
    def func_name(self) -> str: ...


def _deprecated(old: str, new: str) -> None:
    logger.warning(f"{old} is deprecated and will be removed in kernels 0.17. Use {new} instead.")


class FuncRepository:
    """Deprecated: a function `func_name` of the Hub kernel `repo_id` used as a layer."""

    def __init__(
        self,
        repo_id: str,
        *,
        func_name: str,
        revision: str | None = None,
        version: int | None = None,
        trust_remote_code: bool | list[str] = False,
    ):
        _deprecated("FuncRepository", "LayerRepository")
        if revision is not None and version is not None:
            raise ValueError("Either a revision or a version must be specified, not both.")
        if revision is None and version is None:
            raise ValueError("Either a revision or a version must be specified.")
        self._repo_id = repo_id
        self.func_name = func_name
        self._revision = revision
        self._version = version
        self._trust_remote_code = _copied_trust(trust_remote_code)

    @functools.lru_cache()
    def _resolve_revision(self) -> str:
        from .._hub import resolve_revision

        return resolve_revision(self._repo_id, revision=self._revision, version=self._version)

    def load(self) -> Type["nn.Module"]:
        from .._hub import get_kernel

        kernel = get_kernel(self._repo_id, revision=self._resolve_revision(),
                            trust_remote_code=self._trust_remote_code, **load_backend_kwargs())
        return _get_kernel_func(self, kernel)

    def _key(self):
        return (self.func_name, self._repo_id, self._revision, self._version,
                _hashable_trust(self._trust_remote_code))

    def __eq__(self, other):
        return isinstance(other, FuncRepository) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self) -> str:
        return (f"`{self._repo_id}` (revision: {self._resolve_revision()}), "
                f"function `{self.func_name}`")


class LocalFuncRepository:
    """Deprecated: a function of a kernel on disk used as a layer."""

    def __init__(self, repo_path: Path, *, func_name: str):
        _deprecated("LocalFuncRepository", "LocalLayerRepository")
        self._repo_path = repo_path
        self.func_name = func_name

    def load(self) -> Type["nn.Module"]:
        from .._hub import get_local_kernel

        return _get_kernel_func(self, get_local_kernel(_as_path(self._repo_path),
                                                       **load_backend_kwargs()))

    def __eq__(self, other):
        return (isinstance(other, LocalFuncRepository) and self.func_name == other.func_name
                and self._repo_path == other._repo_path)

    def __hash__(self):
        return hash((self.func_name, self._repo_path))

    def __str__(self) -> str:
        # The missing ")" is the reference's text.
        return f"`{self._repo_path}` (layer `{self.func_name}`"


def use_kernel_func_from_hub(func_name: str):
    """Deprecated alias of `use_kernel_forward_from_hub(func_name)`."""
    logger.warning("use_kernel_func_from_hub is deprecated and will be removed in kernels 0.17. "
                   "Use [`use_kernel_forward_from_hub`] instead.")
    return use_kernel_forward_from_hub(func_name)


class LockedFuncRepository:
    """Deprecated: a function of `repo_id` at the commit a kernels.lock pins, used as a layer."""

    def __init__(
        self,
        repo_id: str,
        *,
        lockfile: Path | None = None,
        func_name: str,
        trust_remote_code: bool | list[str] = False,
    ):
        from .._locks import find_locked

        _deprecated("LockedFuncRepository", "LockedLayerRepository")
        self._repo_id = repo_id
        self._lockfile = lockfile
        self.func_name = func_name
        self._trust_remote_code = _copied_trust(trust_remote_code)
        self.kernel_locks, self.kernel_dep = find_locked(repo_id, lockfile)

    def load(self) -> Type["nn.Module"]:
        from .._hub import load_locked_tree

        kernel = load_locked_tree(self.kernel_locks, self.kernel_dep,
                                  trust_remote_code=self._trust_remote_code,
                                  **load_backend_kwargs())
        return _get_kernel_func(self, kernel)

    def _key(self):
        return (self.func_name, self._repo_id, self.kernel_dep, self.kernel_locks,
                _hashable_trust(self._trust_remote_code))

    def __eq__(self, other):
        return isinstance(other, LockedFuncRepository) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self) -> str:
        return (f"`{self._repo_id}` (revision: {self.kernel_locks[self.kernel_dep].commit}), "
                f"function `{self.func_name}`")


def _get_kernel_func(repo: FuncRepositoryProtocol, kernel: ModuleType) -> Type["nn.Module"]:
    func = getattr(kernel, repo.func_name, None)
    if func is None:
        raise ValueError(f"Function `{repo.func_name}` not found in `{repo}`")
    return _create_func_module(func)
