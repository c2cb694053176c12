# SPDX-License-Identifier: Apache-2.0
"""`kernels.archs`: whether a build's declared GPU archs run on a device.

- `_supports_cuda_capability(archs, capability)`: the loader's arch check,
  `loader::arch_mismatch` (`_kernelhub.arch_mismatch`), for a CUDA build with those archs on a
  device of that capability (archs in no known form cannot reject a build).
- `_check_arch_incompatibility(metadata, variant)`: the same check for a variant's metadata on
  this process's GPU (`kernelhub._system.device_arch`, read from torch on every call); kernelhub
  rejects such a variant while choosing it and says why in the trace, this raises that reason.
"""
from __future__ import annotations

from kernelhub import _kernelhub, _system


def _supports_cuda_capability(archs: list[str], capability: tuple[int, int]) -> bool:
    return _kernelhub.arch_mismatch("cuda", list(archs), tuple(capability), None) is None


def _check_arch_incompatibility(metadata, variant: str) -> None:
    cuda, rocm = _system.device_arch()
    reason = _kernelhub.arch_mismatch(str(metadata.backend.backend_type),
                                      metadata.backend.archs, cuda, rocm)
    if reason is not None:
        raise RuntimeError(f"Kernel '{metadata.name}' variant '{variant}' does not support the "
                           f"current device: {reason}. Pass `check_arch=False` to skip this "
                           "check.")
