# SPDX-License-Identifier: Apache-2.0
"""The layer API of kernels 0.17.2: extensible layers, kernel mappings and `kernelize`.

Importing it does not import torch; marking classes needs none, kernelize does.
"""

from .device import CUDAProperties, Device, ROCMProperties
from .func import (
    FuncRepository,
    LocalFuncRepository,
    LockedFuncRepository,
    use_kernel_func_from_hub,
)
from .kernelize import kernelize, register_kernel_mapping, use_kernel_mapping
from .layer import (
    KernelizeFallback,
    LayerRepository,
    LocalLayerRepository,
    LockedLayerRepository,
    replace_kernel_forward_from_hub,
    use_kernel_forward_from_hub,
    use_kernelized_func,
)
from .mode import Mode

__all__ = [
    "CUDAProperties",
    "Device",
    "FuncRepository",
    "KernelizeFallback",
    "LayerRepository",
    "LocalFuncRepository",
    "LocalLayerRepository",
    "LockedFuncRepository",
    "LockedLayerRepository",
    "Mode",
    "ROCMProperties",
    "kernelize",
    "register_kernel_mapping",
    "replace_kernel_forward_from_hub",
    "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernel_mapping",
    "use_kernelized_func",
]
