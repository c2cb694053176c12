# SPDX-License-Identifier: Apache-2.0
"""`kernels.variants`: variant names and the variant choice.

- `parse_variant(name)`: kernelhub's C++ variant-name parser (`_kernelhub.parse_variant`, the
  parser the loader uses), giving kernelhub's variant objects (`kernelhub._variants`: the
  `variant_str`, `framework` and `arch` of the names `kernelhub.get_kernel_variants` returns).
- `_resolve_variant_for_system(...)`: the loader's acceptance and preference rules for a
  described machine (`_kernelhub.resolve_variants`); the decisions are kernelhub's
  `VariantAccepted`/`VariantRejected`.
- `get_variants(api, repo_id=, revision=)`: every variant of a Hub revision, from
  `kernelhub.get_kernel_variants` (its decision trace lists them all).
- `get_variants_local(path)`: the variants of a local build folder, from
  `kernelhub.get_local_kernel_variants`.
- `resolve_variant(variants, backend)`: this machine's choice among `variants`, from
  `_kernelhub.resolve_variants` with kernelhub's system probe.
"""
from __future__ import annotations

import json
from pathlib import Path

import kernelhub
from kernelhub import VariantAccepted, VariantRejected, _kernelhub, _system
from kernelhub._variants import ArchVariant, NoarchVariant, decisions, variant_object

from .backends import system_backend

Variant = ArchVariant | NoarchVariant

__all__ = ["ArchVariant", "NoarchVariant", "Variant", "VariantAccepted", "VariantRejected",
           "get_variants", "get_variants_local", "parse_variant", "resolve_variant",
           "resolve_variants", "variants_trace_str", "_resolve_variant_for_system"]


def parse_variant(variant_str: str) -> Variant:
    return variant_object(_kernelhub.parse_variant(variant_str)["name"])


def _version(value) -> str | None:
    return None if value is None else str(value)


def _resolve(names, backend, backend_version, **system):
    trace, text, _warning = _kernelhub.resolve_variants(
        [str(name) for name in names], backend, backend_version, **system)
    return decisions(trace), text


def _resolve_variant_for_system(variants, selected_backend, cpu, os, torch_version,
                                torch_cxx11_abi, tvm_ffi_version, macos_version=None):
    kind, version = system_backend(selected_backend)
    trace, _text = _resolve(variants, kind, version, cpu=cpu, os=os,
                            torch_version=_version(torch_version), cxx11_abi=torch_cxx11_abi,
                            tvm_ffi_version=_version(tvm_ffi_version),
                            macos_version=_version(macos_version),
                            free_threaded=_free_threaded())
    return [d.variant for d in trace if isinstance(d, VariantAccepted)], trace


def _free_threaded() -> bool:
    return bool(json.loads(_system.probe_json()).get("free_threaded", False))


def _this_machine(backend: str | None) -> dict:
    """This machine as kernelhub's loader sees it (its probe), with `backend=` applied."""
    probe = json.loads(_system.probe_json())
    torch = probe.get("torch") or {}
    detected = _kernelhub.system_backend(_system.probe_json())
    kind = backend or detected
    version = None
    if kind == detected:
        hip = (torch.get("hip") or "").split("-")[0] or None
        version = {"cuda": torch.get("cuda"), "rocm": hip, "xpu": torch.get("xpu"),
                   "cann": torch.get("cann")}.get(kind)
    system = probe.get("system", "").lower()
    return {"backend": kind, "backend_version": version, "cpu": probe.get("machine"),
            "os": system, "torch_version": ".".join(torch["version"].split("+")[0].split(".")[:2])
            if torch.get("version") else None, "cxx11_abi": torch.get("cxx11"),
            "tvm_ffi_version": ".".join(probe["tvm_ffi"].split(".")[:2])
            if probe.get("tvm_ffi") else None, "free_threaded": probe.get("free_threaded", False)}


def resolve_variants(variants, backend: str | None = None):
    machine = _this_machine(backend)
    trace, _text = _resolve(variants, machine.pop("backend"), machine.pop("backend_version"),
                            **machine)
    return [d.variant for d in trace if isinstance(d, VariantAccepted)], trace


def resolve_variant(variants, backend: str | None = None):
    accepted, trace = resolve_variants(variants, backend)
    return (accepted[0] if accepted else None), trace


def get_variants(api, *, repo_id: str, revision: str) -> list[Variant]:
    return [d.variant for d in kernelhub.get_kernel_variants(repo_id, revision=revision)]


def get_variants_local(repo_path: Path) -> list[Variant]:
    return [d.variant for d in kernelhub.get_local_kernel_variants(Path(repo_path))]


def variants_trace_str(trace) -> str:
    names = [d.variant for d in trace]
    machine = _this_machine(None)
    _decisions, text = _resolve(names, machine.pop("backend"), machine.pop("backend_version"),
                                **machine)
    return text
