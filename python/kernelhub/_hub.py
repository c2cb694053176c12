# SPDX-License-Identifier: Apache-2.0
"""Loads from the Hub (loader.md §1.1, §5): the decisions and downloads happen in the C++
core (`_kernelhub.install_hub_kernel`, with the GIL released); this module only gathers the
arguments, reports the core's warnings the way the reference does and imports the variant."""

from __future__ import annotations

import importlib.metadata
import inspect
import logging
import os
import warnings
from pathlib import Path
from types import ModuleType

from . import _kernelhub, _system
from ._loader import RepoInfo, import_variant

_logger = logging.getLogger("kernelhub")


def _device(check_arch: bool):
    return _system.device_arch() if check_arch else (None, None)


def _offline() -> bool:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}:
            return True
    return False


def _check_trust(repo_id: str, trust_remote_code) -> bool:
    """Whether the core must check the publisher: not when trust_remote_code is True, nor when
    it is a list that names this repository (the reference's list form)."""
    if trust_remote_code is True:
        return False
    if isinstance(trust_remote_code, (list, tuple, set)):
        return repo_id not in trust_remote_code
    return True


def _report(messages: list[str]) -> None:
    for message in messages:
        if "redirected to" in message:
            warnings.warn(message, UserWarning, stacklevel=4)
        else:
            _logger.warning(message)


def _install(repo_id: str, *, version=None, revision=None, backend=None,
             local_files_only=False, check_trust=False, check_arch=True) -> dict:
    if version is not None and not isinstance(version, int):
        # The reference takes only integer majors; "1" is "not found" there, a clear error here.
        raise ValueError(f"version must be an int (a v<N> branch), not {version!r}")
    cuda, rocm = _device(check_arch)
    result = _kernelhub.install_hub_kernel(
        repo_id, version=version, revision=revision, backend=backend,
        local_files_only=local_files_only or _offline(), check_trust=check_trust,
        probe_json=_system.probe_json(), cuda_capability=cuda, rocm_arch=rocm)
    _report(result["warnings"])
    return result


def install_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
                   backend: str | None = None, local_files_only: bool = False,
                   user_agent=None, trust_remote_code=False) -> Path:
    """Downloads the variant that fits this machine into the cache and returns its path
    (…/snapshots/<commit>/build/<variant>), without importing it."""
    return Path(_install(repo_id, version=version, revision=revision, backend=backend,
                         local_files_only=local_files_only,
                         check_trust=_check_trust(repo_id, trust_remote_code))["variant_path"])


def get_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
               backend: str | None = None, user_agent=None, trust_remote_code=False,
               check_arch: bool = True) -> ModuleType:
    """Loads `repo_id` at `version` (a v<N> branch) or `revision` from the Hub, or from the
    path LOCAL_KERNELS maps it to."""
    from . import _local_override, get_local_kernel

    local = _local_override(repo_id)
    if local is not None:
        return get_local_kernel(local, backend)
    result = _install(repo_id, version=version, revision=revision, backend=backend,
                      check_trust=_check_trust(repo_id, trust_remote_code),
                      check_arch=check_arch)
    return import_variant(Path(result["variant_path"]),
                          RepoInfo(result["repo_id"], result["revision"]))


def has_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
               backend: str | None = None, trust_remote_code=False,
               check_arch: bool = True) -> bool:
    """Whether a variant of `repo_id` fits this machine (with HF_HUB_OFFLINE: in the cache)."""
    cuda, rocm = _device(check_arch)
    found, messages = _kernelhub.has_hub_kernel(
        repo_id, version=version, revision=revision, backend=backend,
        local_files_only=_offline(), check_trust=_check_trust(repo_id, trust_remote_code),
        probe_json=_system.probe_json(), cuda_capability=cuda, rocm_arch=rocm)
    _report(messages)
    return found


def get_kernel_variants(repo_id: str, *, revision: str | None = None,
                        version: int | None = None, backend: str | None = None) -> list:
    """Every variant of the revision with its decision, accepted ones first, best leading."""
    from . import VariantAccepted, VariantRejected

    cuda, rocm = _device(True)
    trace, messages = _kernelhub.hub_kernel_variants(
        repo_id, version=version, revision=revision, backend=backend,
        local_files_only=_offline(), probe_json=_system.probe_json(), cuda_capability=cuda,
        rocm_arch=rocm)
    _report(messages)
    return [VariantAccepted(name) if reason is None else VariantRejected(name, reason)
            for name, reason in trace]


def _lock_text_of_caller() -> tuple[str, str]:
    """kernels.lock from the distribution of the first caller outside this package (what the
    reference means to do; its frame walk stops inside kernels itself, loader.md §4.3)."""
    for frame in inspect.stack()[1:]:
        module = inspect.getmodule(frame.frame)
        name = module.__name__ if module is not None else frame.frame.f_globals.get("__name__")
        if not name or name == "kernelhub" or name.startswith("kernelhub."):
            continue
        package = name.split(".")[0]
        for dist_name in importlib.metadata.packages_distributions().get(package, []):
            text = importlib.metadata.distribution(dist_name).read_text("kernels.lock")
            if text is not None:
                return text, f"kernels.lock of the {dist_name} distribution"
        break
    raise ValueError(
        "Could not find a `kernels.lock` file in the caller's package metadata. Please lock "
        "kernels with `kernelhub lock <project>` and then reinstall the project.")


def _locked_commit(repo_id: str, lockfile) -> str:
    if lockfile is None:
        text, name = _lock_text_of_caller()
    else:
        text, name = Path(lockfile).read_text(), str(lockfile)
    return _kernelhub.locked_revision(repo_id, text, name)


def load_kernel(repo_id: str, *, lockfile: Path | str | None = None,
                backend: str | None = None) -> ModuleType:
    """Loads the locked commit of `repo_id` from the cache only: never a network request."""
    commit = _locked_commit(repo_id, lockfile)
    try:
        result = _install(repo_id, revision=commit, backend=backend, local_files_only=True)
    except FileNotFoundError as error:
        raise FileNotFoundError(
            f"{error}\nThe locked kernel is not in the cache: run `kernelhub download <project>` "
            "first") from None
    return import_variant(Path(result["variant_path"]))


def get_locked_kernel(repo_id: str, *, lockfile: Path | str | None = None,
                      trust_remote_code=False, user_agent=None) -> ModuleType:
    """Loads the locked commit of `repo_id`, downloading it when online."""
    commit = _locked_commit(repo_id, lockfile)
    result = _install(repo_id, revision=commit,
                      check_trust=_check_trust(repo_id, trust_remote_code))
    return import_variant(Path(result["variant_path"]))
