# SPDX-License-Identifier: Apache-2.0
"""`kernels.backends`: the backend values tests hand to the variant resolver, and the torch
privateuse1 backend name.

- `CPU`, `CUDA(version)`, `ROCm(version)`, `XPU(version)`, `CANN(version)`, `Metal`, `Neuron`,
  `TPU`: descriptions of a machine's backend; `variants._resolve_variant_for_system` turns them
  into the system kernelhub's C++ resolver takes (`_kernelhub.resolve_variants`).
- `_get_torch_privateuse_backend_name`: the `privateuse1` field of kernelhub's system probe
  (`kernelhub._system.probe_json`, the probe the loader's variant choice runs on).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from packaging.version import Version

from kernelhub import _system


@dataclass(frozen=True)
class _Unversioned:
    kind = ""

    @property
    def name(self) -> str:
        return self.kind

    @property
    def variant_str(self) -> str:
        return self.kind


@dataclass(frozen=True)
class _Versioned:
    version: Version
    kind = ""
    prefix = ""

    @property
    def name(self) -> str:
        return self.kind

    @property
    def variant_str(self) -> str:
        return f"{self.prefix}{self.version.major}{self.version.minor}"


class CPU(_Unversioned):
    kind = "cpu"


class Metal(_Unversioned):
    kind = "metal"


class Neuron(_Unversioned):
    kind = "neuron"


class TPU(_Unversioned):
    kind = "tpu"


class CUDA(_Versioned):
    kind, prefix = "cuda", "cu"


class ROCm(_Versioned):
    kind, prefix = "rocm", "rocm"


class XPU(_Versioned):
    kind, prefix = "xpu", "xpu"


class CANN(_Versioned):
    kind, prefix = "cann", "cann"


def system_backend(backend) -> tuple[str, str | None]:
    """(kind, version) as `_kernelhub.resolve_variants` takes a backend."""
    version = getattr(backend, "version", None)
    return backend.kind, (str(version) if version is not None else None)


def _get_torch_privateuse_backend_name() -> str | None:
    return json.loads(_system.probe_json()).get("torch", {}).get("privateuse1")
