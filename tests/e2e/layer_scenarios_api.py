# SPDX-License-Identifier: Apache-2.0
"""Layer scenarios (see layer_scenarios.py): API surface, Mode and KernelizeFallback flags, Device
and the capability properties."""
from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path

from layer_scenarios_common import (
    attempt, error, layer_mod, norm, scenario,
)

# The package under test and its context: bound by layer_scenarios.main() (bind_package)
# before any scenario runs.
PKG = None
NAME = ""
ROOT = Path()
torch = None
nn = None


# ------------------------------------------------------------------------------------------
# API surface


def _param(p: inspect.Parameter) -> list:
    ann = p.annotation
    if ann is inspect.Parameter.empty:
        ann_text = ""
    elif isinstance(ann, str):
        ann_text = ann
    else:
        ann_text = inspect.formatannotation(ann)
    default = "" if p.default is inspect.Parameter.empty else repr(p.default)
    return [p.name, p.kind.name, default, ann_text]


def _signature(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        return {"error": type(exc).__name__}
    ret = sig.return_annotation
    if ret is inspect.Signature.empty:
        ret_text = ""
    elif isinstance(ret, str):
        ret_text = ret
    else:
        ret_text = inspect.formatannotation(ret)
    return {"params": [_param(p) for p in sig.parameters.values()], "return": ret_text}


REFERENCE_ALL = [
    "__version__", "Benchmark", "CUDAProperties", "Device", "KernelizeFallback",
    "ROCMProperties", "FuncRepository", "LayerRepository", "LoadedKernel",
    "LocalFuncRepository", "LocalLayerRepository", "LockedFuncRepository",
    "LockedLayerRepository", "Metadata", "Mode", "RepoInfo", "VariantAccepted",
    "VariantRejected", "get_kernel", "get_kernel_dep", "get_kernel_variants",
    "get_loaded_kernels", "get_local_kernel", "get_locked_kernel", "has_kernel",
    "install_kernel", "kernelize", "load_kernel", "register_kernel_mapping",
    "replace_kernel_forward_from_hub", "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub", "use_kernel_mapping", "use_kernelized_func",
]
REFERENCE_LAYER_ALL = [
    "CUDAProperties", "Device", "KernelizeFallback", "ROCMProperties", "FuncRepository",
    "LayerRepository", "LocalFuncRepository", "LocalLayerRepository", "LockedFuncRepository",
    "LockedLayerRepository", "Mode", "kernelize", "register_kernel_mapping",
    "replace_kernel_forward_from_hub", "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub", "use_kernel_mapping", "use_kernelized_func",
]


@scenario("signatures")
def signatures():
    """Signatures of every public callable (top level and `layer`), constructors included,
    and of the public methods of the layer API's classes."""
    out = {}
    layer = attempt(layer_mod)
    for where, module, names in (("top", PKG, REFERENCE_ALL),
                                 ("layer", layer[1] if layer[0] == "ok" else None,
                                  REFERENCE_LAYER_ALL)):
        for name in names:
            if name == "__version__":
                continue
            key = f"{where}.{name}"
            if module is None or not hasattr(module, name):
                out[key] = "missing"
                continue
            obj = getattr(module, name)
            out[key] = _signature(obj)
            if inspect.isclass(obj) and name.endswith("Repository"):
                for meth in ("load",):
                    out[f"{key}.{meth}"] = (_signature(getattr(obj, meth))
                                            if hasattr(obj, meth) else "missing")
    return out


@scenario()
def public_names():
    """Which names exist where; `kernelhub.layer` has the reference's `kernels.layer.__all__`."""
    layer = layer_mod()
    return {
        "top_missing": [n for n in REFERENCE_ALL if not hasattr(PKG, n)],
        "layer_missing": [n for n in REFERENCE_LAYER_ALL if not hasattr(layer, n)],
        "layer_all": sorted(getattr(layer, "__all__", [])),
        "same_objects": [n for n in REFERENCE_LAYER_ALL
                         if hasattr(layer, n) and getattr(PKG, n, None) is getattr(layer, n)],
        "kinds": {n: type(getattr(PKG, n)).__name__ for n in REFERENCE_LAYER_ALL
                  if hasattr(PKG, n)},
        "get_kernel_dep": hasattr(PKG, "get_kernel_dep"),
    }


# ------------------------------------------------------------------------------------------
# Mode, KernelizeFallback


@scenario()
def mode_flags():
    Mode, KF = PKG.Mode, PKG.KernelizeFallback
    import enum

    members = ["_NONE", "FALLBACK", "TRAINING", "INFERENCE", "TORCH_COMPILE"]
    out = {
        "is_flag": [issubclass(Mode, enum.Flag), issubclass(KF, enum.Flag)],
        "values": {m: getattr(Mode, m).value for m in members},
        "list": [str(m) for m in Mode],
        "has_default": hasattr(Mode, "DEFAULT"),
        "kf_values": {m.name: m.value for m in KF.__members__.values()},
        "kf_list": [str(m) for m in KF],
        "repr": [repr(Mode.INFERENCE), repr(KF.ALL), repr(KF.DEFAULT)],
    }
    ors = {}
    for a in members:
        for b in members:
            res = attempt(lambda: getattr(Mode, a) | getattr(Mode, b))
            if res[0] == "ok":
                res = ["ok", str(res[1]), res[1].value, type(res[1]).__name__]
            ors[f"{a}|{b}"] = res
    out["or"] = ors
    out["xor_and"] = {
        "I^T": attempt(lambda: str(Mode.INFERENCE ^ Mode.TRAINING)),
        "I&T": attempt(lambda: str(Mode.INFERENCE & Mode.TRAINING)),
        "~I": attempt(lambda: str(~Mode.INFERENCE)),
        "F^I": attempt(lambda: str(Mode.FALLBACK ^ Mode.INFERENCE)),
        "or_int": attempt(lambda: str(Mode.INFERENCE | 8)),
        "or_kf": attempt(lambda: str(Mode.INFERENCE | KF.NO_LAYER)),
        "three": attempt(lambda: str(Mode.INFERENCE | Mode.TORCH_COMPILE | Mode.TORCH_COMPILE)),
    }
    out["by_value"] = {n: attempt(lambda n=n: str(Mode(n))) for n in range(-1, 18)}
    out["kf_by_value"] = {n: attempt(lambda n=n: str(KF(n))) for n in range(0, 33, 3)}
    out["kf_str"] = [str(KF.NO_LAYER | KF.CANNOT_LOAD), str(KF.DEFAULT), str(KF.ALL),
                     str(KF.NONE), str(KF.ALL & ~KF.NO_DEVICE), str(KF.DEFAULT | KF.CANNOT_LOAD)]
    out["kf_contains"] = [KF.NO_LAYER in KF.DEFAULT, KF.CANNOT_LOAD in KF.DEFAULT,
                          KF.CANNOT_LOAD in KF.ALL, KF.ALL == (KF.DEFAULT | KF.CANNOT_LOAD)]
    out["names"] = [Mode.INFERENCE.name, (Mode.INFERENCE | Mode.TORCH_COMPILE).name]
    return out


# ------------------------------------------------------------------------------------------
# Device, CUDAProperties, ROCMProperties


@scenario()
def devices():
    Device, CP, RP = PKG.Device, PKG.CUDAProperties, PKG.ROCMProperties

    def show(obj):
        # hash(None) differs between processes on 3.11: compare with the documented formula
        fields = tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))
        return [repr(obj), hash(obj) == hash(fields), type(obj).__name__]

    cases = {
        "cuda": lambda: Device("cuda"),
        "cpu_kw": lambda: Device(type="cpu"),
        "int_type": lambda: Device(type=5),
        "str_props": lambda: Device("cuda", properties="x"),
        "cuda_props": lambda: Device("cuda", CP(75, 90)),
        "rocm_props": lambda: Device("rocm", RP(90, 94)),
        "cpu_cuda_props": lambda: Device("cpu", CP(75, 90)),
        "rocm_cuda_props": lambda: Device("rocm", CP(75, 90)),
        "cuda_rocm_props": lambda: Device("cuda", RP(75, 90)),
        "xpu_rocm_props": lambda: Device("xpu", properties=RP(1, 2)),
        "foo": lambda: Device("foo"),
        "none": lambda: Device(),
        "three": lambda: Device("cuda", None, 3),
        "props": lambda: CP(75, 90),
        "props_kw": lambda: CP(min_capability=80, max_capability=80),
        "props_float": lambda: CP(min_capability=75.0, max_capability=90),
        "props_reversed": lambda: CP(90, 75),
        "rocm_reversed": lambda: RP(94, 90),
        "props_str": lambda: CP("75", 90),
        "props_missing": lambda: CP(75),
        "props_extra": lambda: CP(1, 2, 3),
        "props_maxsize": lambda: CP(0, sys.maxsize),
    }
    out = {}
    for name, make in cases.items():
        try:
            obj = make()
        except Exception as exc:  # noqa: BLE001
            res = error(exc)
            res.append(norm(type(exc.__cause__).__name__) if exc.__cause__ else None)
            res.append(isinstance(exc, ValueError))
            out[name] = res
            continue
        out[name] = ["ok"] + show(obj)
    a, b = Device("cuda", CP(75, 90)), Device("cuda", CP(75, 90))
    out["eq"] = [
        a == b, a != b, hash(a) == hash(b), Device("cuda") == "cuda", Device("cuda") != "cuda",
        CP(75, 90) == RP(75, 90), Device("cuda") == Device("cuda", None),
        Device("cuda") == Device("rocm"), CP(75, 90) == CP(75, 91),
        Device("cuda").__eq__("cuda") is NotImplemented, len({a, b, Device("cuda")}),
    ]
    out["frozen"] = [attempt(lambda: setattr(a, "type", "cpu")),
                     attempt(lambda: setattr(CP(1, 2), "min_capability", 0))]
    out["fields"] = [[f.name for f in dataclasses.fields(c)] for c in (Device, CP, RP)]
    out["is_dataclass"] = [dataclasses.is_dataclass(c) for c in (Device, CP, RP)]
    out["astuple"] = attempt(lambda: dataclasses.astuple(Device("cuda", CP(1, 2))))
    out["replace"] = attempt(lambda: repr(dataclasses.replace(Device("cuda"), type="cpu")))
    return out
