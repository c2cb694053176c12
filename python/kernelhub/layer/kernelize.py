# SPDX-License-Identifier: Apache-2.0
"""`kernelize` and the mapping registration functions (layers.md §5.2, §5.3, §8.1-8.3)."""

from __future__ import annotations

import logging
from copy import deepcopy
from typing import TYPE_CHECKING

from .device import Device
from .globals import _KERNEL_MAPPING, current_mapping, update_shared_mapping
from .layer import KernelizeFallback, kernelize_layer
from .mode import Mode
from .repos import DeviceRepos, RepositoryProtocol

if TYPE_CHECKING:
    import torch
    from torch import nn

logger = logging.getLogger(__name__)

_SUPPORTED_DEVICES = ("cpu", "cuda", "mps", "neuron", "npu", "rocm", "tpu", "xpu")


def use_kernel_mapping(
    mapping: dict[str, dict[Device | str, RepositoryProtocol | dict[Mode, RepositoryProtocol]]],
    *,
    inherit_mapping: bool = True,
):
    """A context manager that registers `mapping` on top of a copy of the current mapping (or
    on an empty one without `inherit_mapping`) and restores the previous mapping on exit."""

    class ContextManager:
        def __enter__(self):
            current = current_mapping()
            self.token = _KERNEL_MAPPING.set(deepcopy(current) if inherit_mapping else {})
            register_kernel_mapping(mapping)

        def __exit__(self, exc_type, exc_value, traceback):
            _KERNEL_MAPPING.reset(self.token)

    return ContextManager()


def register_kernel_mapping(
    mapping: dict[str, dict[Device | str, RepositoryProtocol | dict[Mode, RepositoryProtocol]]],
    inherit_mapping: bool = True,
):
    """Merges `mapping` ({layer name: {device: repository or {Mode: repository}}}) into the
    current mapping: per layer name, then per device type; a mode dict replaces the previous
    one of its device (or, for cuda/rocm, of its capability range)."""
    if not inherit_mapping:
        _KERNEL_MAPPING.set({})

    def update(current):
        for layer_name, device_repos in mapping.items():
            entry = current.setdefault(layer_name, {})
            for device_key, value in device_repos.items():
                device = Device(type=device_key) if isinstance(device_key, str) else device_key
                options = value if isinstance(value, dict) else {Mode.FALLBACK: value}
                container = entry.setdefault(device.type, DeviceRepos.create_repo(device))
                container.insert(device, options)

    own = _KERNEL_MAPPING.get()
    if own is None:
        update_shared_mapping(update)
    else:
        update(own)


def kernelize(
    model: "nn.Module",
    *,
    mode: Mode,
    device: str | "torch.device" | None = None,
    use_fallback: bool | KernelizeFallback = True,
):
    """Replaces, in place, the forward of every extensible module of `model` (and of the
    functions attached with use_kernelized_func) by the kernel layer the current mapping gives
    for `mode` and the device; returns `model`."""
    if mode == Mode.FALLBACK:
        raise ValueError("Mode.FALLBACK can only be used to register kernel mappings.")
    if Mode.INFERENCE not in mode and Mode.TRAINING not in mode:
        raise ValueError("kernelize mode must contain Mode.INFERENCE or Mode.TRAINING.")
    if device is None:
        device_type = _find_device(model)
    elif isinstance(device, str):
        _validate_device_type(device)
        device_type = Device(type=device)
    else:
        device_type = Device(device.type)
    if isinstance(use_fallback, bool):
        use_fallback = KernelizeFallback.DEFAULT if use_fallback else KernelizeFallback.NONE

    for _, module in model.named_modules():
        module_class = type(module)
        # Attached functions are kernelized whatever their condition says, as in kernels.
        for kernel_func in getattr(module, "_kernel_funcs", {}).values():
            kernelize_layer(kernel_func, mode=mode, device_type=device_type,
                            use_fallback=use_fallback)
        if hasattr(module_class, "kernel_layer_name"):
            condition = getattr(module_class, "kernel_condition", None)
            if condition and not condition(module):
                logger.info("Skipping kernelization for `%s` using `%s` due to kernel_condition.",
                            module_class.__name__, module_class.kernel_layer_name)
                continue
            kernelize_layer(module, mode=mode, device_type=device_type, use_fallback=use_fallback)
    return model


def _validate_device_type(device_type: str) -> None:
    if device_type not in _SUPPORTED_DEVICES:
        raise ValueError(f"Unsupported device type '{device_type}'. Supported device types are: "
                         f"{', '.join(_SUPPORTED_DEVICES)}")


def _find_device(model: "nn.Module") -> Device:
    try:
        param = next(model.parameters())
    except StopIteration:
        raise ValueError(
            "Cannot determine model device, provide as `device` argument to `kernelize`."
        ) from None
    if param.device.type == "cuda":
        import torch

        if torch.version.hip is not None:
            return Device(type="rocm")
        if torch.version.cuda is not None:
            return Device(type="cuda")
    return Device(type=param.device.type)
