# SPDX-License-Identifier: Apache-2.0
"""Per-device-type containers of a kernel mapping and the choice of a repository by mode
(layers.md §5.4, §6).

cuda and rocm keep one mode dict per capability range and pick the narrowest range that
contains the device's capability. The reference keeps the ranges in an AVL interval tree that
breaks ties between equally wide ranges by `id()` and can hold one range twice after rotations;
here the ranges are a dict keyed by `(min, max)` in registration order, so the same range
replaces its entry and, among equally narrow matches, the one registered last wins. A mapping
has a handful of ranges, so a linear scan is the fast choice.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from .device import CUDAProperties, Device, ROCMProperties
from .mode import Mode

if TYPE_CHECKING:
    from torch import nn


class RepositoryProtocol(Protocol):
    """What kernelize needs of a repository: `load()` giving the kernel layer class, plus
    `__eq__`/`__hash__` (the layer cache key) and `__str__` (logs and errors)."""

    def load(self) -> type["nn.Module"]: ...


_SINGLE_CONTAINER_TYPES = ("cpu", "mps", "xpu", "npu", "neuron", "tpu")


class DeviceRepos:
    """The repositories of one layer name on one device type."""

    @staticmethod
    def create_repo(device: Device) -> "DeviceRepos":
        if device.type in _SINGLE_CONTAINER_TYPES:
            return _SingleRepos(device.type)
        if device.type == "cuda":
            return _CapabilityRepos("cuda", CUDAProperties)
        if device.type == "rocm":
            return _CapabilityRepos("rocm", ROCMProperties)
        raise ValueError(f"Unknown device type: {device.type}")

    @property
    def repos(self) -> dict[Mode, RepositoryProtocol] | None:
        raise NotImplementedError

    def insert(self, device: Device, repos: dict[Mode, RepositoryProtocol]) -> None:
        raise NotImplementedError

    def copy(self) -> "DeviceRepos":
        """A container that can be changed without changing this one (the mode dicts are
        shared: kernels stores them by reference, never copies them)."""
        raise NotImplementedError


class _SingleRepos(DeviceRepos):
    """One mode dict: the last registration replaces it; device properties are ignored."""

    def __init__(self, device_type: str):
        self.device_type = device_type
        self._repos: dict[Mode, RepositoryProtocol] = {}

    @property
    def repos(self) -> dict[Mode, RepositoryProtocol] | None:
        return self._repos

    def insert(self, device: Device, repos: dict[Mode, RepositoryProtocol]) -> None:
        if device.type != self.device_type:
            raise ValueError(f"Device type must be '{self.device_type}', got {device.type}")
        self._repos = repos

    def copy(self) -> "_SingleRepos":
        other = _SingleRepos(self.device_type)
        other._repos = self._repos
        return other


class _CapabilityRepos(DeviceRepos):
    """Mode dicts per inclusive capability range; a device without properties covers every
    capability, `[0, sys.maxsize]`."""

    def __init__(self, device_type: str, properties_type: type):
        self.device_type = device_type
        self._properties_type = properties_type
        self.repos_by_capability: dict[tuple[int, int], dict[Mode, RepositoryProtocol]] = {}

    @property
    def repos(self) -> dict[Mode, RepositoryProtocol] | None:
        return self.find(_find_capability())

    def find(self, capability: int) -> dict[Mode, RepositoryProtocol] | None:
        best = None
        best_width = None
        for (low, high), repos in self.repos_by_capability.items():
            if low <= capability <= high and (best_width is None or high - low <= best_width):
                best, best_width = repos, high - low
        return best

    def insert(self, device: Device, repos: dict[Mode, RepositoryProtocol]) -> None:
        properties = device.properties
        if properties is not None and not isinstance(properties, self._properties_type):
            raise ValueError(
                f"{self.device_type} mappings take {self._properties_type.__name__}, "
                f"got {type(properties).__name__}")
        key = (0, sys.maxsize) if properties is None else (
            properties.min_capability, properties.max_capability)
        # Re-registering a range moves it to the end: it is now the newest of its width.
        self.repos_by_capability.pop(key, None)
        self.repos_by_capability[key] = repos

    def copy(self) -> "_CapabilityRepos":
        other = _CapabilityRepos(self.device_type, self._properties_type)
        other.repos_by_capability = dict(self.repos_by_capability)
        return other


_MODE_FALLBACK_PRIORITY = {
    Mode.INFERENCE: [
        Mode.INFERENCE,
        Mode.INFERENCE | Mode.TORCH_COMPILE,
        Mode.TRAINING,
        Mode.TRAINING | Mode.TORCH_COMPILE,
        Mode.FALLBACK,
    ],
    Mode.TRAINING: [Mode.TRAINING, Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK],
    Mode.INFERENCE | Mode.TORCH_COMPILE: [
        Mode.INFERENCE | Mode.TORCH_COMPILE,
        Mode.TRAINING | Mode.TORCH_COMPILE,
        Mode.FALLBACK,
    ],
    Mode.TRAINING | Mode.TORCH_COMPILE: [Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK],
}


def _select_repository(
    repositories: dict[Mode, RepositoryProtocol], *, mode: Mode
) -> tuple[RepositoryProtocol, Mode] | None:
    """The first repository in the mode's priority list, with the key it was found under."""
    if mode not in _MODE_FALLBACK_PRIORITY:
        raise ValueError(f"Unsupported mode: {mode}")
    for candidate in _MODE_FALLBACK_PRIORITY[mode]:
        if candidate in repositories:
            return repositories[candidate], candidate
    return None


@lru_cache
def _find_capability() -> int:
    """The current GPU's capability, major*10 + minor (ROCm reports the gfx version), asked once
    per process as the reference does."""
    import torch

    major, minor = torch.cuda.get_device_capability(device=None)
    return major * 10 + minor
