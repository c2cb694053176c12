# SPDX-License-Identifier: Apache-2.0
"""`kernels.resolver`: where a kernel dependency is found.

The locations and the resolver combinators are data and plumbing (`LocalKernel`,
`RemoteKernel`, `SequentialResolver`, `NoopResolver`); every decision is kernelhub's:

- local paths (`RepoPathsResolver`, `KernelPathsResolver`, `resolve_local_kernel`): the
  loader's local variant lookup, `_kernelhub.find_local_variant` (variant folders in the path,
  then path/build, else the path itself), with `kernelhub.data.Metadata` for its metadata.json;
- the Hub (`HubResolver`, `resolve_hub_kernel`) and the cache (`HubCacheResolver`): the
  loader's Hub load, `_kernelhub.install_hub_kernel` (publisher trust, the version's commit,
  the variant choice, the download; with local_files_only, the cache only);
- locks (`LockedHubResolver`, `LockedHubCacheResolver`, `_locked_revision`): the locked commit
  from `kernelhub.data.KernelLocks`, then the same Hub load at that commit.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from kernelhub import _find, _hub, _kernelhub, _system
from kernelhub._errors import translate_errors
from kernelhub.data import KernelLocks, KernelPaths, KernelVersion, Metadata

from .variants import Variant, get_variants, parse_variant  # noqa: F401  (tests patch get_variants)

_BYTECODE_IGNORE_PATTERNS = ["*.pyc", "**/__pycache__/**"]


@dataclass(frozen=True)
class LocalKernel:
    variant_path: Path
    metadata: Metadata
    origin: "RemoteKernel | None" = None

    @property
    def variant_str(self) -> str:
        return self.variant_path.name

    def install(self, *, api) -> "LocalKernel":
        return self


@dataclass(frozen=True)
class RemoteKernel:
    repo_id: str
    revision: str
    metadata: Metadata
    variant: Variant

    @property
    def variant_str(self) -> str:
        return self.variant.variant_str

    def install(self, *, api) -> LocalKernel:
        result = _install(self.repo_id, revision=self.revision, backend=None,
                          local_files_only=False, check_trust=False)
        return LocalKernel(variant_path=Path(result["variant_path"]), metadata=self.metadata,
                           origin=self)


def _install(repo_id: str, *, revision: str | None = None, version: int | None = None,
             backend: str | None, local_files_only: bool, check_trust: bool) -> dict:
    cuda, rocm = _system.device_arch()
    with translate_errors(repo_id):
        result = _kernelhub.install_hub_kernel(
            repo_id, version=version, revision=revision, backend=backend,
            local_files_only=local_files_only, check_trust=check_trust,
            probe_json=_system.probe_json(), cuda_capability=cuda, rocm_arch=rocm,
            user_agent=_hub.user_agent_text(None))
    _hub._report(result["warnings"])
    return result


def _metadata(variant_path) -> Metadata:
    return Metadata.read_from_file(Path(variant_path) / "metadata.json")


def resolve_local_kernel(repo_path: Path, *, backend: str | None) -> LocalKernel:
    variant_path, _trace, _text = _find(Path(repo_path), backend)
    return LocalKernel(variant_path=Path(variant_path), metadata=_metadata(variant_path))


def _remote(result: dict) -> RemoteKernel:
    return RemoteKernel(repo_id=result["repo_id"], revision=result["revision"],
                        metadata=_metadata(result["variant_path"]),
                        variant=parse_variant(result["variant"]))


def resolve_hub_kernel(repo_id: str, *, api, backend: str | None, revision: str) -> RemoteKernel:
    return _remote(_install(repo_id, revision=revision, backend=backend,
                            local_files_only=False, check_trust=False))


def _pin(kernel) -> dict:
    if isinstance(kernel.version, KernelVersion.Version):
        return {"version": kernel.version.version}
    return {"revision": kernel.version.revision}


@runtime_checkable
class Resolver(Protocol):
    def resolve(self, *, api, backend: str | None, kernel):
        ...


@dataclass
class SequentialResolver:
    resolvers: list

    def resolve(self, *, api, backend, kernel):
        for resolver in self.resolvers:
            location = resolver.resolve(api=api, backend=backend, kernel=kernel)
            if location is not None:
                return location
        return None


@dataclass
class NoopResolver:
    def resolve(self, *, api, backend, kernel):
        return None


@dataclass
class HubResolver:
    trust_remote_code: bool | list[str]

    def resolve(self, *, api, backend, kernel) -> RemoteKernel:
        result = _install(kernel.repo_id, **_pin(kernel), backend=backend, local_files_only=False,
                          check_trust=_hub._check_trust(kernel.repo_id, self.trust_remote_code))
        return _remote(result)


@dataclass
class HubCacheResolver:
    trust_remote_code: bool | list[str]

    def resolve(self, *, api, backend, kernel) -> LocalKernel:
        result = _install(kernel.repo_id, **_pin(kernel), backend=backend, local_files_only=True,
                          check_trust=False)
        return LocalKernel(variant_path=Path(result["variant_path"]),
                           metadata=_metadata(result["variant_path"]))


def _locked_revision(kernel_locks: KernelLocks, kernel) -> str:
    lock = kernel_locks.get(kernel, None)
    if lock is None:
        raise ValueError(f"Kernel `{kernel.repo_id}` is not locked. Please lock it with "
                         "`kernels lock <project>` and then reinstall the project.")
    return lock.commit


@dataclass
class LockedHubResolver:
    kernel_locks: KernelLocks
    trust_remote_code: bool | list[str]

    def resolve(self, *, api, backend, kernel) -> RemoteKernel:
        commit = _locked_revision(self.kernel_locks, kernel)
        return _remote(_install(kernel.repo_id, revision=commit, backend=backend,
                                local_files_only=False,
                                check_trust=_hub._check_trust(kernel.repo_id,
                                                              self.trust_remote_code)))


@dataclass
class LockedHubCacheResolver:
    kernel_locks: KernelLocks
    trust_remote_code: bool | list[str]

    def resolve(self, *, api, backend, kernel) -> LocalKernel:
        commit = _locked_revision(self.kernel_locks, kernel)
        result = _install(kernel.repo_id, revision=commit, backend=backend,
                          local_files_only=True, check_trust=False)
        return LocalKernel(variant_path=Path(result["variant_path"]),
                           metadata=_metadata(result["variant_path"]))


@dataclass
class KernelPathsResolver:
    kernel_paths: KernelPaths

    def resolve(self, *, api, backend, kernel) -> LocalKernel | None:
        repo_path = self.kernel_paths.get(kernel, None)
        return None if repo_path is None else resolve_local_kernel(repo_path, backend=backend)


@dataclass
class RepoPathsResolver:
    local_kernels: dict

    def resolve(self, *, api, backend, kernel) -> LocalKernel | None:
        repo_path = self.local_kernels.get(kernel.repo_id, None)
        return None if repo_path is None else resolve_local_kernel(repo_path, backend=backend)
