# SPDX-License-Identifier: Apache-2.0
"""`kernels._versions`: a kernel version (the v<N> branch) to its commit.

- `resolve_version_spec_as_ref`, `select_revision_or_version`, `resolve_kernel_version`: the
  loader's version resolution, `_kernelhub.resolve_hub_revision` (the call behind
  `kernelhub`'s LayerRepository and get_kernel: numeric order, the outdated-version warning
  on `kernelhub._versions`, offline from the cache's refs), wrapped in huggingface_hub's
  `GitRefInfo` as the reference returns it.
"""
from __future__ import annotations

from huggingface_hub.hf_api import GitRefInfo

from kernelhub import _hub, _kernelhub, _system
from kernelhub._errors import translate_errors
from kernelhub.data import KernelDependency, KernelVersion

_NEITHER = ("A kernel version or revision must be specified. "
            "Use `version=<major>` for a stable kernel API version or "
            "`revision=<branch/tag/commit>` for an explicit Hub revision. "
            "See: https://huggingface.co/docs/kernels/migration")


def _commit(repo_id: str, version: int, local_files_only: bool) -> str:
    with translate_errors(repo_id):
        commit, messages = _kernelhub.resolve_hub_revision(
            repo_id, version=version, revision=None,
            local_files_only=local_files_only or _hub._offline(),
            probe_json=_system.probe_json(), user_agent=_hub.user_agent_text(None))
    _hub._report(messages)
    return commit


def resolve_version_spec_as_ref(repo_id: str, version_spec: int,
                                local_files_only: bool) -> GitRefInfo:
    commit = _commit(repo_id, version_spec, local_files_only)
    return GitRefInfo(name=f"v{version_spec}", ref=f"refs/heads/v{version_spec}",
                      target_commit=commit)


def select_revision_or_version(repo_id: str, *, revision: str | None, version: int | None,
                               local_files_only: bool) -> str:
    if revision is not None and version is not None:
        raise ValueError("Only one of `revision` or `version` must be specified.")
    if revision is not None:
        return revision
    if version is not None:
        return _commit(repo_id, version, local_files_only)
    raise ValueError(_NEITHER)


def resolve_kernel_version(kernel: KernelDependency, local_files_only: bool) -> str:
    if isinstance(kernel.version, KernelVersion.Version):
        return _commit(kernel.repo_id, kernel.version.version, local_files_only)
    return kernel.version.revision
