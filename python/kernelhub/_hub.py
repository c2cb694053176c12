# SPDX-License-Identifier: Apache-2.0
"""Loads from the Hub and from disk (loader.md §1.1, §5; layers.md §9): the decisions and
downloads happen in the C++ core (`_kernelhub.install_hub_kernel`, with the GIL released);
this module gathers the arguments, walks a kernel's `kernel-depends` tree, reports the core's
warnings the way the reference does and imports the variants, dependencies first."""

from __future__ import annotations


import logging
import os
import platform
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Sequence

from . import _kernelhub, _system
from ._errors import translate_errors
from ._loader import RepoInfo, import_variant, validate_variant

if TYPE_CHECKING:  # imported where used: their dataclasses cost ~1.5 ms to define
    from ._locks import KernelLocks, LockedDependency
    from ._variants import VariantAccepted, VariantRejected

# kernels logs the outdated-version warning on `kernels._versions`; ours on the same spot of
# our tree.
_logger = logging.getLogger("kernelhub._versions")
_trust_logger = logging.getLogger("kernelhub.hf_hub")

_TRUE = {"1", "ON", "YES", "TRUE"}


def _env_flag(*names: str) -> bool:
    return any(os.environ.get(name, "").strip().upper() in _TRUE for name in names)


def _offline() -> bool:
    return _env_flag("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def _device(check_arch: bool, backend: str | None):
    """The GPU's arch where it can decide between variants of `backend`; asking torch for it
    costs a first `torch.cuda.is_available()`, so a load that names another backend does not."""
    if check_arch and _system.arch_matters(backend):
        return _system.device_arch()
    return None, None


def _check_trust(repo_id: str, trust_remote_code) -> bool:
    """Whether the core must check the publisher: not when trust_remote_code is True, nor when
    it is a list that names this repository (the reference's list form)."""
    if trust_remote_code is True:
        return False
    if isinstance(trust_remote_code, (list, tuple, set)):
        return repo_id not in trust_remote_code
    return True


_OFFLINE_TRUST = "because Hugging Face Hub is in offline mode"


def _report(messages: list[str]) -> None:
    """The core's warnings, each where kernels reports it: redirects as a UserWarning, the
    offline trust notice on `hf_hub`, the outdated-version notice on `_versions`."""
    for message in messages:
        if "redirected to" in message:
            warnings.warn(message, UserWarning, stacklevel=4)
        elif _OFFLINE_TRUST in message:
            _trust_logger.warning(message)
        else:
            _logger.warning(message)


def _backend_token() -> str:
    torch = sys.modules.get("torch")
    if torch is not None:
        if getattr(torch.version, "cuda", None):
            return "cu" + "".join(torch.version.cuda.split(".")[:2])
        if getattr(torch.version, "hip", None):
            return "rocm" + "".join(torch.version.hip.split("-")[0].split(".")[:2])
    return "cpu"


def _telemetry_disabled() -> bool:
    """The environment, or huggingface_hub's setting when it is loaded (code may set
    `huggingface_hub.constants.HF_HUB_DISABLE_TELEMETRY`, which kernels reads)."""
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None and getattr(constants, "HF_HUB_DISABLE_TELEMETRY", False):
        return True
    return _env_flag("HF_HUB_DISABLE_TELEMETRY", "DISABLE_TELEMETRY", "DO_NOT_TRACK")


def user_agent_text(user_agent: str | dict | None) -> str:
    """The part of the User-Agent kernels adds to huggingface_hub's: the caller's fields, then
    python, backend, platform, file_type, torch, tvm-ffi (when tvm_ffi is installed) and glibc;
    empty when telemetry is off."""
    if _telemetry_disabled():
        return ""
    parts: list[str] = []
    if isinstance(user_agent, dict):
        parts.extend(f"{key}/{value}" for key, value in user_agent.items())
    elif isinstance(user_agent, str) and user_agent:
        parts.append(user_agent)
    # The probe imports torch, as kernels does to name it; tvm_ffi's version it reads from the
    # package metadata (kernels imports tvm_ffi to ask).
    probe = _system.probe(device=False)
    machine = platform.machine().lower().replace("amd64", "x86_64").replace("arm64", "aarch64")
    parts += [f"python/{'.'.join(platform.python_version_tuple()[:2])}",
              f"backend/{_backend_token()}",
              f"platform/{machine}-{platform.system().lower()}",
              "file_type/kernel"]
    torch = sys.modules.get("torch")
    if torch is not None:
        parts.append(f"torch/{torch.__version__}")
    tvm_ffi = probe.get("tvm_ffi")
    if tvm_ffi:
        parts.append(f"tvm-ffi/{tvm_ffi}")
    libc, version = platform.libc_ver()
    if libc == "glibc" and version:
        parts.append(f"glibc/{version}")
    return "; ".join(parts)


def _request_agent(user_agent: str | dict | None, local_files_only: bool) -> str:
    """The User-Agent part for the core's requests; none is made from the cache alone, so the
    text (a libc lookup that reads the interpreter's binary among it) is not made either."""
    return "" if local_files_only else user_agent_text(user_agent)


def _install(repo_id: str, *, version=None, revision=None, backend=None,
             local_files_only=False, check_trust=False, check_arch=True,
             user_agent=None) -> dict:
    if version is not None and not isinstance(version, int):
        # The reference takes only integer majors; "1" is "not found" there, a clear error here.
        raise ValueError(f"version must be an int (a v<N> branch), not {version!r}")
    cuda, rocm = _device(check_arch, backend)
    local_files_only = local_files_only or _offline()
    if check_trust and local_files_only:
        # Said before anything can fail, as kernels does; the core then has nothing to check.
        _trust_logger.warning(f"Skipping publisher trust check for '{repo_id}' "
                              f"{_OFFLINE_TRUST}.")
        check_trust = False
    with translate_errors(repo_id):
        result = _kernelhub.install_hub_kernel(
            repo_id, version=version, revision=revision, backend=backend,
            local_files_only=local_files_only, check_trust=check_trust,
            probe_json=_system.probe(_system.needs_device(backend)), cuda_capability=cuda,
            rocm_arch=rocm, user_agent=_request_agent(user_agent, local_files_only))
    _report(result["warnings"])
    return result


def resolve_revision(repo_id: str, *, revision: str | None = None, version: int | None = None,
                     user_agent=None) -> str:
    """A version's commit (a revision as given), as LayerRepository resolves it lazily."""
    with translate_errors(repo_id):
        resolved, messages = _kernelhub.resolve_hub_revision(
            repo_id, version=version, revision=revision, local_files_only=_offline(),
            probe_json=_system.probe(device=False),
            user_agent=_request_agent(user_agent, _offline()))
    _report(messages)
    return resolved


# --- dependency trees --------------------------------------------------------------------------

# One node of a kernel-depends tree: (repo_id, version, revision).
Spec = tuple[str, "int | None", "str | None"]
# Where a node's variant is: its path and, for Hub loads, where it came from. The path is
# text, as the core gives it: a Path's own text is made on first use (a first-call cost in
# a warm load), and every consumer takes text.
Locator = Callable[[Spec], "tuple[str, RepoInfo | None]"]


def walk_kernel_tree(spec: Spec, locate: Callable, locate_dep: Callable,
                     depends_of: Callable, make: Callable, path: tuple[Spec, ...] = ()):
    """The kernel-depends tree of `spec`, depth first: `locate(spec)` finds the node, each of
    `depends_of(location)` (specs) is walked with `locate_dep` (a spec already on the path is a
    cycle), then `make(location, {repo_id: child})` builds the node."""
    location = locate(spec)
    deps = {}
    for child in depends_of(location):
        if child in path or child == spec:
            raise ValueError(f"Cyclic kernel dependency detected: {child[0]}")
        deps[child[0]] = walk_kernel_tree(child, locate_dep, locate_dep, depends_of, make,
                                          path + (spec,))
    return make(location, deps)


def _load_tree(spec: Spec, locate: Locator, locate_dep: Locator) -> ModuleType:
    """Locates `spec`, loads its kernel-depends depth first, then imports it with its direct
    dependencies visible to get_kernel_dep."""

    def with_module(locator: Locator):
        def locate_module(node: Spec):
            variant_path, repo_info = locator(node)
            info = _kernelhub.resolve_kernel_module(variant_path)
            # This node before its dependencies and before anything is imported, as kernels
            # validates the whole tree (python-depends, kernels-minver) first.
            validate_variant(variant_path, info)
            return variant_path, repo_info, info
        return locate_module

    def depends_of(location) -> list[Spec]:
        return list(location[2]["kernel_depends"])

    def make(location, deps: dict[str, ModuleType]) -> ModuleType:
        variant_path, repo_info, info = location
        return import_variant(variant_path, repo_info, deps=deps, info=info)

    return walk_kernel_tree(spec, with_module(locate), with_module(locate_dep), depends_of, make)


def _local_override(repo_id: str) -> Path | None:
    from . import parse_local_kernels

    text = os.environ.get("LOCAL_KERNELS")
    return None if text is None else parse_local_kernels(text).get(repo_id)


def _find_local(path: Path, backend: str | None) -> str:
    from . import _find

    variant_path, _trace, _text = _find(path, backend)
    return os.fspath(variant_path)


def _hub_locator(*, backend, trust_remote_code, user_agent, check_arch,
                 require_signature=False, trusted_keys=()) -> Locator:
    """LOCAL_KERNELS first (by repo id, the version ignored), else the Hub."""

    def locate(spec: Spec):
        repo_id, version, revision = spec
        local = _local_override(repo_id)
        if local is not None:
            return _find_local(local, backend), None
        result = _install(repo_id, version=version, revision=revision, backend=backend,
                          check_trust=_check_trust(repo_id, trust_remote_code),
                          check_arch=check_arch, user_agent=user_agent)
        if require_signature:
            # Before _load_tree imports anything of this node or its dependencies.
            _kernelhub.require_signed_variant(result["variant_path"],
                                              [os.fspath(key) for key in trusted_keys])
        return result["variant_path"], RepoInfo(result["repo_id"], result["revision"])

    return locate


def _locked_locator(locks: KernelLocks, *, trust_remote_code, cache_only: bool,
                    backend=None) -> Locator:
    """Every node at the commit the lock pins for exactly its spec; LOCAL_KERNELS ignored."""

    def locate(spec: Spec):
        repo_id = spec[0]
        commit = locks.find_exact(*spec)
        if commit is None:
            raise ValueError(f"Kernel `{repo_id}` is not locked. Please lock it with "
                             "`kernels lock <project>` and then reinstall the project.")
        result = _install(repo_id, revision=commit, backend=backend,
                          local_files_only=cache_only,
                          check_trust=_check_trust(repo_id, trust_remote_code),
                          check_arch=False)
        return result["variant_path"], RepoInfo(repo_id, commit)

    return locate


def _spec_of(dependency: LockedDependency) -> Spec:
    return dependency.repo_id, dependency.version, dependency.revision


def load_locked_tree(locks: KernelLocks, dependency: LockedDependency, *, trust_remote_code=False,
                     cache_only: bool = False, backend=None) -> ModuleType:
    locate = _locked_locator(locks, trust_remote_code=trust_remote_code,
                             cache_only=cache_only or _offline(), backend=backend)
    return _load_tree(_spec_of(dependency), locate, locate)


# --- the public loaders -------------------------------------------------------------------------


def install_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
                   backend: str | None = None, local_files_only: bool = False,
                   user_agent: str | dict | None = None,
                   trust_remote_code: bool | list[str] = False) -> Path:
    """Downloads the variant that fits this machine into the cache and returns its path
    (…/snapshots/<commit>/build/<variant>), without importing it."""
    return Path(_install(repo_id, version=version, revision=revision, backend=backend,
                         local_files_only=local_files_only,
                         check_trust=_check_trust(repo_id, trust_remote_code),
                         user_agent=user_agent)["variant_path"])


def get_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
               backend: str | None = None, user_agent: str | dict | None = None,
               trust_remote_code: bool | list[str] = False,
               check_arch: bool = True, require_signature: bool | None = None,
               trusted_keys: Sequence[str | os.PathLike] | None = None) -> ModuleType:
    """Loads `repo_id` at `version` (a v<N> branch) or `revision` from the Hub, or from the
    path LOCAL_KERNELS maps it to, with its kernel-depends loaded first. `require_signature`
    (default: KERNELHUB_REQUIRE_SIGNATURE) refuses, before anything is imported, a variant
    whose metadata.json has no valid Sigstore signature of a trusted workflow, nor a keyed
    signature (`kernel-builder sign`) by a trusted key, or whose files differ from its digest.
    `trusted_keys` (PEM public key files) are the keys a keyed signature must come from;
    without them KERNELHUB_TRUSTED_KEYS, else the keys the hub publishes."""
    local = _local_override(repo_id)
    if local is not None:
        # As kernels, the trust and version checks do not apply to an override; backend= does
        # (kernels drops it, which makes a cpu override unloadable next to a CUDA torch).
        return get_local_kernel(local, backend=backend, trust_remote_code=trust_remote_code,
                                user_agent=user_agent)
    locate = _hub_locator(backend=backend, trust_remote_code=trust_remote_code,
                          user_agent=user_agent, check_arch=check_arch,
                          require_signature=_kernelhub.signature_required(require_signature),
                          trusted_keys=tuple(trusted_keys or ()))
    return _load_tree((repo_id, version, revision), locate, locate)


def get_local_kernel(repo_path: Path, *, backend: str | None = None,
                     trust_remote_code: bool | list[str] = False,
                     user_agent: str | dict | None = None) -> ModuleType:
    """Imports the variant of a local kernel that fits this machine: variant folders in
    `repo_path`, then in `repo_path/build`, else `repo_path` itself. The module is named after
    the metadata id, so several builds of one kernel load side by side. Its kernel-depends come
    from LOCAL_KERNELS, else the Hub."""
    root = _find_local(Path(repo_path), backend)
    locate_dep = _hub_locator(backend=backend, trust_remote_code=trust_remote_code,
                              user_agent=user_agent, check_arch=False)
    return _load_tree((str(repo_path), None, None), lambda _spec: (root, None), locate_dep)


def has_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
               backend: str | None = None, trust_remote_code: bool | list[str] = False,
               check_arch: bool = True) -> bool:
    """Whether a variant of `repo_id` fits this machine (with HF_HUB_OFFLINE: in the cache)."""
    cuda, rocm = _device(check_arch, backend)
    with translate_errors(repo_id):
        found, messages = _kernelhub.has_hub_kernel(
            repo_id, version=version, revision=revision, backend=backend,
            local_files_only=_offline(), check_trust=_check_trust(repo_id, trust_remote_code),
            probe_json=_system.probe(_system.needs_device(backend)),
            cuda_capability=cuda, rocm_arch=rocm)
    _report(messages)
    return found


def get_kernel_variants(repo_id: str, *, revision: str | None = None,
                        version: int | None = None, backend: str | None = None
                        ) -> list[VariantAccepted | VariantRejected]:
    """Every variant of the revision with its decision, accepted ones first, best leading."""
    cuda, rocm = _device(True, backend)
    with translate_errors(repo_id):
        trace, messages = _kernelhub.hub_kernel_variants(
            repo_id, version=version, revision=revision, backend=backend,
            local_files_only=_offline(),
            probe_json=_system.probe(_system.needs_device(backend)),
            cuda_capability=cuda, rocm_arch=rocm)
    _report(messages)
    from ._variants import decisions

    return decisions(trace)


def load_kernel(repo_id: str, *, lockfile: Path | None, backend: str | None = None) -> ModuleType:
    """Loads the locked commit of `repo_id` (and its locked dependencies) from the cache only:
    never a network request."""
    from ._locks import find_locked

    locks, dependency = find_locked(repo_id, lockfile)
    return load_locked_tree(locks, dependency, cache_only=True, backend=backend)


def get_locked_kernel(repo_id: str, *, lockfile: Path | None,
                      trust_remote_code: bool | list[str] = False,
                      user_agent: str | dict | None = None) -> ModuleType:
    """Loads the locked commit of `repo_id` and its locked dependencies, downloading them when
    online. `lockfile=None`: the kernels.lock of the calling package's distribution."""
    from ._locks import find_locked

    locks, dependency = find_locked(repo_id, lockfile)
    return load_locked_tree(locks, dependency, trust_remote_code=trust_remote_code)
