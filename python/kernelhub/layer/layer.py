# SPDX-License-Identifier: Apache-2.0
"""Extensible layers, kernel-layer repositories and replacing one module's forward
(layers.md §2, §7, §8.4-8.8).

A class is extensible when it carries the class attribute `kernel_layer_name` (and optionally
`kernel_condition`): the same attributes kernels sets, so classes decorated by either package,
or by transformers directly, are kernelized by either package.
"""

from __future__ import annotations

import functools
import inspect
import logging
from contextvars import ContextVar
from enum import Flag, auto
from inspect import Parameter, Signature
from pathlib import Path
from types import MethodType, ModuleType
from typing import TYPE_CHECKING, Callable, Protocol

from .._hub import get_kernel
from .device import Device
# _KERNEL_MAPPING is also read from here, where kernels keeps it (`kernels.layer.layer`).
from .globals import _DISABLE_KERNEL_MAPPING, _KERNEL_MAPPING, current_mapping  # noqa: F401
from .mode import Mode
from .repos import RepositoryProtocol, _select_repository

if TYPE_CHECKING:
    from torch import nn

# The reference's logger names are part of its interface (users filter on them); ours mirror
# them under kernelhub.
logger = logging.getLogger(__name__)


class KernelizeFallback(Flag):
    """Which failures make kernelize keep a module's own forward instead of raising."""

    NONE = 0
    NO_LAYER = auto()
    NO_DEVICE = auto()
    NO_COMPATIBLE_PROPERTIES = auto()
    NO_COMPATIBLE_MODE = auto()
    CANNOT_LOAD = auto()

    DEFAULT = NO_LAYER | NO_DEVICE | NO_COMPATIBLE_PROPERTIES | NO_COMPATIBLE_MODE
    ALL = DEFAULT | CANNOT_LOAD


class LayerRepositoryProtocol(RepositoryProtocol, Protocol):
    @property
    def layer_name(self) -> str: ...


def _copied_trust(trust_remote_code):
    return trust_remote_code.copy() if isinstance(trust_remote_code, list) else trust_remote_code


def _hashable_trust(trust_remote_code):
    return tuple(trust_remote_code) if isinstance(trust_remote_code, list) else trust_remote_code


class LayerRepository:
    """A kernel layer `layer_name` of the Hub kernel `repo_id` at a `version` (a v<N> branch)
    or a `revision`. Nothing is fetched until kernelize needs the layer."""

    def __init__(
        self,
        repo_id: str,
        *,
        layer_name: str,
        revision: str | None = None,
        version: int | None = None,
        trust_remote_code: bool | list[str] = False,
        user_agent: str | dict | None = None,
    ):
        if revision is not None and version is not None:
            raise ValueError("Either a revision or a version must be specified, not both.")
        if revision is None and version is None:
            raise ValueError("Either a revision or a version must be specified.")
        self._repo_id = repo_id
        self.layer_name = layer_name
        self._trust_remote_code = _copied_trust(trust_remote_code)
        self._user_agent = user_agent
        self._revision = revision
        self._version = version

    @functools.lru_cache()
    def _resolve_revision(self) -> str:
        from .._hub import resolve_revision

        return resolve_revision(self._repo_id, revision=self._revision, version=self._version,
                                user_agent=self._user_agent)

    def load(self) -> type["nn.Module"]:
        # The module's `get_kernel`, looked up at the call, as kernels' tests patch it there.
        kernel = get_kernel(self._repo_id, revision=self._resolve_revision(),
                            trust_remote_code=self._trust_remote_code,
                            user_agent=self._user_agent, **load_backend_kwargs())
        return _get_kernel_layer(self, kernel)

    def _key(self):
        return (self.layer_name, self._repo_id, self._revision, self._version,
                _hashable_trust(self._trust_remote_code))

    def __eq__(self, other):
        return isinstance(other, LayerRepository) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self) -> str:
        return f"`{self._repo_id}` (revision: {self._resolve_revision()}), layer `{self.layer_name}`"


class LocalLayerRepository:
    """A kernel layer from a kernel on disk: a repository, its `build/` folder, or a variant."""

    def __init__(self, repo_path: Path, *, layer_name: str):
        self._repo_path = repo_path
        self.layer_name = layer_name

    def load(self) -> type["nn.Module"]:
        from .._hub import get_local_kernel

        return _get_kernel_layer(self, get_local_kernel(_as_path(self._repo_path),
                                                        **load_backend_kwargs()))

    def __eq__(self, other):
        return (isinstance(other, LocalLayerRepository) and self.layer_name == other.layer_name
                and self._repo_path == other._repo_path)

    def __hash__(self):
        return hash((self.layer_name, self._repo_path))

    def __str__(self) -> str:
        return f"`{self._repo_path}` (layer `{self.layer_name}`)"


def _as_path(repo_path) -> Path:
    # kernels fails on a str path ("unsupported operand type(s) for /"); a path given as text
    # means the same folder, so we accept it (a deliberate difference).
    return Path(repo_path) if isinstance(repo_path, str) else repo_path


class LockedLayerRepository:
    """A kernel layer of `repo_id` at the commit a kernels.lock pins: the file given, else the
    lock shipped in the metadata of the calling package's distribution. The lock is read here,
    at construction."""

    def __init__(
        self,
        repo_id: str,
        *,
        lockfile: Path | None = None,
        layer_name: str,
        trust_remote_code: bool | list[str] = False,
    ):
        from .._locks import find_locked

        self._repo_id = repo_id
        self._lockfile = lockfile
        self.layer_name = layer_name
        self._trust_remote_code = _copied_trust(trust_remote_code)
        self.kernel_locks, self.kernel_dep = find_locked(repo_id, lockfile)

    def load(self) -> type["nn.Module"]:
        from .._hub import load_locked_tree

        kernel = load_locked_tree(self.kernel_locks, self.kernel_dep,
                                  trust_remote_code=self._trust_remote_code,
                                  **load_backend_kwargs())
        return _get_kernel_layer(self, kernel)

    def _key(self):
        return (self.layer_name, self._repo_id, self.kernel_dep, self.kernel_locks,
                _hashable_trust(self._trust_remote_code))

    def __eq__(self, other):
        return isinstance(other, LockedLayerRepository) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self) -> str:
        # The stray ")" is the reference's; messages that users match on keep it.
        return (f"`{self._repo_id}` (revision: {self.kernel_locks[self.kernel_dep].commit}), "
                f"layer `{self.layer_name}`)")


# Layers loaded and validated once per (equal) repository for the whole process (and, for a
# repository mapped for "cpu", once more for the cpu variant).
_CACHED_LAYER: dict = {}

# The backend a repository's load() asks the loader for: "cpu" while kernelize loads a
# repository mapped for the "cpu" device, so the cpu variant is loaded even where torch selects
# another backend (a CUDA build of torch), and the loader's choice when the kernel has no cpu
# variant; None (the loader's choice) otherwise. A deliberate
# difference from kernels, which loads the selected backend's variant for a "cpu" mapping too
# (issue 22 §4).
_LOAD_BACKEND: ContextVar[str | None] = ContextVar("_LOAD_BACKEND", default=None)


def load_backend_kwargs() -> dict:
    """`backend=` for the loader call of a repository's load(), when kernelize set one; kept out
    of the call otherwise, so a patched get_kernel without that parameter still works."""
    backend = _LOAD_BACKEND.get()
    return {} if backend is None else {"backend": backend}


def _mark(cls, layer_name: str, condition) -> None:
    cls.kernel_layer_name = layer_name
    cls.kernel_condition = staticmethod(condition if condition is not None else _always)


def _always(_module) -> bool:
    return True


def replace_kernel_forward_from_hub(
    cls, layer_name: str, condition: Callable[["nn.Module"], bool] | None = None
):
    """Makes a class you do not own extensible under `layer_name`; `condition(module)` may
    exclude single instances at kernelize time."""
    _mark(cls, layer_name, condition)


def use_kernel_forward_from_hub(
    layer_name: str, condition: Callable[["nn.Module"], bool] | None = None
):
    """Decorator: marks a class extensible under `layer_name`, or turns a function into a
    one-instance module (`Func`) that kernelize can replace."""

    def decorator(cls_or_func):
        if inspect.isclass(cls_or_func):
            _mark(cls_or_func, layer_name, condition)
            return cls_or_func
        if inspect.isfunction(cls_or_func):
            func_class = _create_func_module(cls_or_func)
            _mark(func_class, layer_name, condition)
            return func_class()
        raise TypeError("@use_kernel_forward_from_hub can only be applied to classes or functions")

    return decorator


def use_kernelized_func(*args: Callable):
    """Class decorator: attaches functions decorated with use_kernel_forward_from_hub to every
    instance (in `_kernel_funcs`, not as submodules) so kernelize finds them."""

    def decorator(cls):
        for fn in args:
            if not hasattr(fn, "kernel_layer_name"):
                raise ValueError(
                    f"Function `{fn.__name__}` is not decorated with @use_kernel_forward_from_hub "
                    "and cannot be used with @use_kernelized_func")
        original_init = cls.__init__

        def new_init(self, *args_, **kwargs):
            original_init(self, *args_, **kwargs)
            # Bypasses nn.Module.__setattr__: neither submodules nor parameters.
            funcs = self.__dict__.setdefault("_kernel_funcs", {})
            for fn in args:
                key = getattr(fn, "__name__", None) or getattr(fn, "kernel_layer_name", None)
                funcs[key] = fn

        # The same signature as kernels' wrapper, (self, *args, **kwargs).
        new_init.__signature__ = inspect.Signature([
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        cls.__init__ = new_init
        return cls

    return decorator


def _get_kernel_layer(repo: LayerRepositoryProtocol, kernel: ModuleType) -> type["nn.Module"]:
    if getattr(kernel, "layers", None) is None:
        raise ValueError(f"Kernel repo {repo} does not define any layers.")
    layer = getattr(kernel.layers, repo.layer_name, None)
    if layer is None:
        raise ValueError(f"Layer `{repo.layer_name}` not found in kernel repo {repo}.")
    return layer


def _module_members() -> frozenset[str]:
    """`nn.Module`'s members now: read on every validation, as the reference does, since
    libraries add members to `nn.Module` at run time (transformers adds `smart_apply` when it
    builds its first model), and a layer class inherits them."""
    import torch.nn as nn

    return frozenset(name for name, _ in inspect.getmembers(nn.Module))


def _validate_layer(*, check_cls, cls, repo: RepositoryProtocol) -> None:
    """A kernel layer is stateless: an nn.Module without its own constructor or members beyond
    the two flags, whose forward takes the same kinds of parameters as the module's."""
    import torch.nn as nn

    if not issubclass(cls, nn.Module):
        raise TypeError(f"Layer `{cls.__name__}` is not a Torch layer.")
    if cls.__init__ is not nn.Module.__init__:
        raise TypeError(f"{repo} must not override nn.Module constructor.")
    extra = {name for name, _ in inspect.getmembers(cls)} - _module_members()
    if not extra <= {"can_torch_compile", "has_backward"}:
        raise TypeError(
            f"{repo} must not contain additional members compared to `{check_cls.__name__}`.")
    params = inspect.signature(cls.forward).parameters
    ref_params = inspect.signature(check_cls.forward).parameters
    if len(params) != len(ref_params):
        raise TypeError(f"Forward signature of {repo} does not match `{check_cls.__name__}`: "
                        "different number of arguments.")
    for param, ref_param in zip(params.values(), ref_params.values()):
        if param.kind != ref_param.kind:
            raise TypeError(
                f"Forward signature of {repo} does not match `{check_cls.__name__}`: different "
                f"kind of arguments ({param} ({param.kind}) and {ref_param} ({ref_param.kind})")


def _replace_forward(module: "nn.Module", layer: type["nn.Module"]) -> None:
    # An instance attribute shadows the class's forward; the class itself is never changed.
    module.forward = MethodType(layer.forward, module)


def _conditionally_replace_forward(*, module, layer, mode: Mode,
                                   use_fallback: KernelizeFallback) -> None:
    needs_compile = Mode.TORCH_COMPILE in mode and not getattr(layer, "can_torch_compile", False)
    needs_backward = Mode.TRAINING in mode and not getattr(layer, "has_backward", True)
    if not (needs_compile or needs_backward):
        _replace_forward(module, layer)
        return
    if KernelizeFallback.NO_COMPATIBLE_MODE not in use_fallback:
        raise ValueError(f"Available kernel does not support mode: {mode}")
    # The root logger, as kernels logs these (its first use attaches a stderr handler).
    if needs_compile:
        logging.info("Layer does not support torch.compile, using fallback")
    if needs_backward:
        logging.info("Layer does not support backward, using fallback")
    _replace_forward(module, type(module))


def _validate_layer_has_mode(*, layer_name: str, module, repo: RepositoryProtocol,
                             repo_mode: Mode) -> bool:
    if Mode.TRAINING in repo_mode and not getattr(module, "has_backward", True):
        raise ValueError(f"Function/layer from repo {repo} does not support backward.\n"
                         f"Was registered for `{layer_name}` with mode `{repo_mode}`")
    if Mode.TORCH_COMPILE in repo_mode and not getattr(module, "can_torch_compile", False):
        raise ValueError(f"Function/layer from repo {repo} does not support torch.compile.\n"
                         f"Was registered for `{layer_name}` with mode `{repo_mode}`")
    return True


def _get_layer_memoize(repo: RepositoryProtocol, module_class,
                       device_type: str | None = None) -> type["nn.Module"]:
    backend = "cpu" if device_type == "cpu" else None
    key = repo if backend is None else (repo, backend)
    layer = _CACHED_LAYER.get(key)
    if layer is not None:
        return layer
    token = _LOAD_BACKEND.set(backend)
    try:
        layer = repo.load()
    except FileNotFoundError as error:
        # Only a kernel found without a cpu variant is loaded again; one not found at all
        # fails as it would have.
        if backend is None or not str(error).startswith("Cannot find a build variant"):
            raise
        # No cpu variant: the loader's own choice, as kernels loads it (a GPU variant whose
        # ops may take CPU tensors too).
        _LOAD_BACKEND.set(None)
        layer = repo.load()
    finally:
        _LOAD_BACKEND.reset(token)
    _validate_layer(check_cls=module_class, cls=layer, repo=repo)
    _CACHED_LAYER[key] = layer
    return layer


def _create_func_module(func: Callable) -> type["nn.Module"]:
    """A module class whose forward calls `func`, with func's parameters (after `self`) as its
    signature so kernel layers are checked against the function's real parameters."""
    from torch import nn

    class Func(nn.Module):
        can_torch_compile = getattr(func, "can_torch_compile", False)
        has_backward = getattr(func, "has_backward", True)

        def forward(self, *args, **kwargs):
            return func(*args, **kwargs)

    signature = inspect.signature(func)
    Func.forward.__signature__ = Signature(
        parameters=[Parameter("self", Parameter.POSITIONAL_OR_KEYWORD),
                    *signature.parameters.values()],
        return_annotation=signature.return_annotation)
    return Func


def kernelize_layer(module: "nn.Module", *, mode: Mode, device_type: Device,
                    use_fallback: KernelizeFallback) -> None:
    """Binds the mapped kernel layer's forward to `module`, or its class's own forward when a
    fallback applies (layers.md §8.4)."""
    device = device_type
    module_class = type(module)
    if _DISABLE_KERNEL_MAPPING:
        _replace_forward(module, module_class)
        return
    layer_name = module_class.kernel_layer_name
    entry = current_mapping().get(str(layer_name))
    if entry is None:
        logger.warning(
            "\nNo kernel mapping found for layer `%s`. Check if the layer name matches one of "
            "the kernels in the mapping or add the kernel you want to use to the mapping. "
            "Defaulting to original forward implementation.", layer_name)
        if KernelizeFallback.NO_LAYER not in use_fallback:
            raise ValueError(f"No layer mapping for `{layer_name}`")
        _replace_forward(module, module_class)
        return
    container = entry.get(device.type)
    if container is None:
        if KernelizeFallback.NO_DEVICE not in use_fallback:
            raise ValueError(f"No layer mapping for `{layer_name}` with device type `{device}`")
        _replace_forward(module, module_class)
        return
    repos = container.repos
    if repos is None:
        if KernelizeFallback.NO_COMPATIBLE_PROPERTIES not in use_fallback:
            raise ValueError(
                f"No layer mapping for `{layer_name}` device `{device}` with the right properties")
        _replace_forward(module, module_class)
        return
    selected = _select_repository(repos, mode=mode)
    if selected is None:
        if KernelizeFallback.NO_COMPATIBLE_MODE not in use_fallback:
            raise ValueError(f"No repository for `{layer_name}` for configuration mode={mode}")
        _replace_forward(module, module_class)
        return
    repo, repo_mode = selected
    logging.info(f"Using function/layer from repo {repo}")
    logging.debug(f"kernelize mode: {mode}, repo mode: {repo_mode}")
    try:
        layer = _get_layer_memoize(repo, module_class, device.type)
    except FileNotFoundError:
        if KernelizeFallback.CANNOT_LOAD not in use_fallback:
            raise
        logger.info("Kernel for layer `%s` on %s could not be loaded; using the original forward.",
                    layer_name, device.type)
        _replace_forward(module, module_class)
        return
    _validate_layer_has_mode(layer_name=layer_name, module=layer, repo=repo, repo_mode=repo_mode)
    _conditionally_replace_forward(module=module, layer=layer, mode=mode,
                                   use_fallback=use_fallback)
