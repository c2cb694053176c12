# SPDX-License-Identifier: Apache-2.0
"""Scenarios of the layer API, run by test_layer_differential.py once under the reference
`kernels` 0.17.2 and once under `kernelhub`, each in a fresh interpreter:

    python layer_scenarios.py <package> <group> <workdir>

The package under test is only reached through `importlib.import_module(<package>)` (and its
`layer` submodule), so the same code exercises both. Every scenario returns plain JSON data:
return values, the `forward` each module ended up with (a label, see `describe`), errors as
[`"error"`, qualified class name, `str(e)`], the log records it produced (logger, level, message)
and the Python warnings it raised. The last stdout line is one JSON object
{scenario: {"result", "logs", "warnings"}}.

Isolation: every scenario runs in a fresh `contextvars.Context` and uses layer names, repository
labels and classes of its own, so a mapping registered by one scenario (top-level
registrations go to the reference's shared default dict) cannot change another's result.
Capabilities of simulated CUDA/ROCm devices come from replacing
`<package>.layer.repos._find_capability`.
"""
from __future__ import annotations

import contextvars
import copy
import dataclasses
import functools
import importlib
import inspect
import json
import logging
import sys
import threading
import traceback
import warnings
from pathlib import Path

# name -> (group, function); groups run in separate processes (see the test).
SCENARIOS: dict = {}

PKG = None  # the package under test
NAME = ""  # its import name
ROOT = Path()  # working directory with the hand-made kernels
torch = None
nn = None

# forward function -> label, so that the chosen forward is reported by name.
LABELS: dict = {}


# Scenarios that call the reference `kernels` directly: its log records count as the package's.
INTEROP: set = set()
# Scenarios that register into the process-wide default mapping; every other one starts from
# an empty mapping of its own context (a locked repository left in the shared mapping would
# make later inheriting use_kernel_mapping calls fail in the reference).
SHARED_DEFAULT: set = set()
CURRENT = [""]  # the scenario running


def scenario(group: str = "main", interop: bool = False, shared_default: bool = False):
    def register(fn):
        SCENARIOS[fn.__name__] = (group, fn)
        if interop:
            INTEROP.add(fn.__name__)
        if shared_default:
            SHARED_DEFAULT.add(fn.__name__)
        return fn

    return register


# ------------------------------------------------------------------------------------------
# Helpers


def norm(text: str) -> str:
    """Replaces the package name in module paths, so `kernels.x` and `kernelhub.x` compare."""
    if text == NAME or text.startswith(NAME + "."):
        return "PKG" + text[len(NAME):]
    return text


def error(exc: BaseException) -> list:
    # A package's own subclass of a public exception (kernelhub raises a subclass of
    # huggingface_hub's RepositoryNotFoundError, which issue 11 allows) is reported as the
    # public class it derives from; the same rule applies to both packages.
    cls = type(exc)
    for base in cls.__mro__:
        if not (base.__module__ == NAME or base.__module__.startswith(NAME + ".")):
            if base is not object and base is not BaseException:
                cls = base
            break
    return ["error", norm(f"{cls.__module__}.{cls.__qualname__}"), str(exc)]


def attempt(fn, *args, **kwargs) -> list:
    try:
        return ["ok", fn(*args, **kwargs)]
    except Exception as exc:  # noqa: BLE001 - the error itself is the result
        return error(exc)


def layer_mod(sub: str = ""):
    return importlib.import_module(f"{NAME}.layer{sub}")


def set_capability(cap):
    """Simulates a CUDA/ROCm device of capability `cap` (both read the same function)."""
    repos = layer_mod(".repos")
    repos._find_capability = lambda: cap


def mode(text: str):
    """`"INFERENCE|TORCH_COMPILE"` -> the package's Mode value (built with `|`)."""
    Mode = PKG.Mode
    value = None
    for part in text.split("|"):
        member = getattr(Mode, part)
        value = member if value is None else value | member
    return value


KERNELIZE_MODES = ["INFERENCE", "TRAINING", "INFERENCE|TORCH_COMPILE", "TRAINING|TORCH_COMPILE"]
MAPPING_KEYS = ["FALLBACK", "INFERENCE", "TRAINING", "INFERENCE|TORCH_COMPILE",
                "TRAINING|TORCH_COMPILE"]


def fallback_value(text):
    """`True`/`False` or a KernelizeFallback member name (or `A|B`)."""
    if isinstance(text, bool):
        return text
    value = None
    for part in text.split("|"):
        member = getattr(PKG.KernelizeFallback, part)
        value = member if value is None else value | member
    return value


FALLBACKS = [True, False, "NONE", "NO_LAYER", "NO_DEVICE", "NO_COMPATIBLE_PROPERTIES",
             "NO_COMPATIBLE_MODE", "CANNOT_LOAD", "DEFAULT", "ALL"]


def label_forward(fn, label):
    LABELS[fn] = label
    return fn


def describe(module) -> str:
    """Which forward `module` runs: the label of the function bound in its `__dict__`,
    `class` when kernelize left no instance forward."""
    bound = module.__dict__.get("forward")
    if bound is None:
        return "class"
    func = getattr(bound, "__func__", bound)
    label = LABELS.get(func)
    if label is None:
        qual = getattr(func, "__qualname__", repr(func)).split("<locals>.")[-1]
        # a wrapped function's module class comes from whichever package wrapped it
        origin = "" if qual == "Func.forward" else norm(getattr(func, "__module__", "?"))
        label = f"{origin}:{qual}"
    if getattr(bound, "__self__", None) is not module:
        label += " [bound to another object]"
    return label


def kernel_class(label, *, factor=1.0, flags=None, forward=None, bases=None, extra=None):
    """A kernel layer class whose forward multiplies by `factor`, labelled `label`."""
    if forward is None:
        def forward(self, x):
            return x * factor
    label_forward(forward, f"kernel:{label}")
    namespace = {"forward": forward}
    namespace.update(flags or {})
    namespace.update(extra or {})
    return type(label, tuple(bases or (nn.Module,)), namespace)


class StubRepo:
    """A repository whose `load()` returns a class made by the scenario (the protocol of
    layers.md §7.1: load, hash, eq, str, deep copy)."""

    def __init__(self, label, layer):
        self.label = label
        self.layer = layer
        self.loads = 0

    def load(self):
        self.loads += 1
        LOADS.append(self.label)
        if isinstance(self.layer, BaseException):
            raise self.layer
        return self.layer

    def __eq__(self, other):
        return isinstance(other, StubRepo) and other.label == self.label

    def __hash__(self):
        return hash(("stub", self.label))

    def __str__(self):
        return f"<stub {self.label}>"


LOADS: list = []
ORIGINAL_CAPABILITY: list = []  # restored after every scenario


def stub(label, **kwargs):
    return StubRepo(label, kernel_class(label, **kwargs))


def layer_class(layer_name, cls_name="Orig", *, condition=None, decorate=None):
    """A decorated layer class (forward adds 1) for probing which kernel a name gets."""
    def forward(self, x):
        return x + 1

    label_forward(forward, f"orig:{cls_name}")
    cls = type(cls_name, (nn.Module,), {"forward": forward})
    deco = decorate or PKG.use_kernel_forward_from_hub
    if condition is None:
        return deco(layer_name)(cls)
    return deco(layer_name, condition)(cls)


def probe(layer_name, *, kmode="INFERENCE", device="cpu", use_fallback=True, cap=None):
    """Kernelizes one fresh module of `layer_name`: the forward it gets, or the error."""
    module = layer_class(layer_name)()
    if cap is not None:
        set_capability(cap)
    try:
        PKG.kernelize(module, mode=mode(kmode), device=device,
                      use_fallback=fallback_value(use_fallback))
    except Exception as exc:  # noqa: BLE001
        return error(exc)
    return [describe(module), module(torch.ones(2)).tolist()]


def write(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_kernels(root: Path):
    """Hand-made local kernels: metadata.json (backend cpu), __init__.py, layers.py."""
    def kernel(name, init, layers=None):
        variant = root / name / "build" / "torch-universal"
        write(variant / "metadata.json", json.dumps({
            "name": name, "id": f"_{name.replace('-', '_')}_layer_diff", "version": 1,
            "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}))
        write(variant / "__init__.py", init)
        if layers is not None:
            write(variant / "layers.py", layers)

    kernel("klayers", """
from . import layers

def triple(x):
    return x * 3

def quad(x):
    return x * 4
quad.has_backward = False

def comp(x):
    return x * 5
comp.can_torch_compile = True

def two(x, y):
    return x + y
""", """
import torch
from torch import nn


class Double(nn.Module):
    def forward(self, x):
        return x * 2


class DoubleWeight(nn.Module):
    def forward(self, x):
        return x * self.weight * 2


class ReluPlus(nn.Module):
    def forward(self, x):
        return torch.relu(x) + 10


class NoBackward(nn.Module):
    has_backward = False

    def forward(self, x):
        return x * 7


class Compilable(nn.Module):
    can_torch_compile = True

    def forward(self, x):
        return x * 8


class CompilableNoBackward(nn.Module):
    can_torch_compile = True
    has_backward = False

    def forward(self, x):
        return x * 9


class WithInit(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x


class WithMember(nn.Module):
    def helper(self):
        return 1

    def forward(self, x):
        return x


class TwoArgs(nn.Module):
    def forward(self, x, y):
        return x


NotAModule = 5
""")
    kernel("knolayers", "def triple(x):\n    return x * 3\n")
    kernel("kemptylayers", "from types import SimpleNamespace\nlayers = SimpleNamespace()\n")


def local(name, layer):
    return PKG.LocalLayerRepository(ROOT / name, layer_name=layer)


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


# ------------------------------------------------------------------------------------------
# Mappings


@scenario()
def mapping_merge():
    M = PKG.Mode
    reg = PKG.register_kernel_mapping
    a, b, c = stub("mm_a", factor=2.0), stub("mm_b", factor=3.0), stub("mm_c", factor=4.0)
    out = {}
    reg({"MmL": {"cpu": {M.INFERENCE: a}}})
    out["1"] = [probe("MmL", kmode=k) for k in KERNELIZE_MODES]
    reg({"MmL": {"cpu": {M.TRAINING: b}}})  # replaces the mode dict, no merge
    out["2"] = [probe("MmL", kmode=k) for k in KERNELIZE_MODES]
    reg({"MmL": {"xpu": c}})  # another device type keeps cpu
    out["3"] = [probe("MmL", kmode="TRAINING"), probe("MmL", kmode="TRAINING", device="xpu")]
    reg({"MmL2": {"cpu": c}, "MmL": {"cpu": a}})  # bare repository: FALLBACK
    out["4"] = [probe("MmL", kmode=k) for k in KERNELIZE_MODES] + [probe("MmL2")]
    reg({"MmL3": {"cpu": b}}, inherit_mapping=False)  # wipes this context's mapping
    out["5"] = [probe("MmL"), probe("MmL2"), probe("MmL3"),
                probe("MmL", use_fallback=False)]
    reg({"MmL3": {PKG.Device("cpu"): a}}, False)
    out["6"] = probe("MmL3")
    out["return"] = repr(reg({}))
    return out


@scenario()
def mapping_mode_dict_by_reference():
    """A mode dict is stored as given: changing it after registration is seen."""
    M = PKG.Mode
    a, b = stub("mr_a", factor=2.0), stub("mr_b", factor=3.0)
    options = {M.FALLBACK: a}
    PKG.register_kernel_mapping({"MrL": {"cpu": options}})
    first = probe("MrL")
    options[M.INFERENCE] = b
    return [first, probe("MrL"), probe("MrL", kmode="TRAINING")]


@scenario()
def mapping_unknown_devices():
    reg = PKG.register_kernel_mapping
    a = stub("ud_a", factor=2.0)
    out = {}
    for i, key in enumerate(["meta", "foo", "cuda:0", "CPU", ""]):
        name = f"UdL{i}"
        out[key] = [attempt(reg, {name: {key: a}}),
                    probe(name, use_fallback=False),  # empty entry left behind: NO_DEVICE
                    probe(name, use_fallback="NO_LAYER")]
    out["device_obj"] = attempt(reg, {"UdL9": {PKG.Device("meta"): a}})
    out["second_device_fails"] = [attempt(reg, {"UdLx": {"cpu": a, "bar": a}}), probe("UdLx")]
    # property objects of no known class: ignored on single-container types, refused (by
    # the reference's bare assert) on cuda/rocm
    out["odd_properties"] = {t: attempt(reg, {f"UdP{t}": {PKG.Device(t, properties="x"): a}})
                             for t in ("cpu", "xpu")}
    # (the reference's refusal is an empty AssertionError: only the refusal is compared)
    out["odd_properties_refused"] = {
        t: attempt(reg, {f"UdP{t}": {PKG.Device(t, properties="x"): a}})[0]
        for t in ("cuda", "rocm")}
    out["odd_properties_probe"] = probe("UdPcpu")
    out["known"] = [attempt(reg, {f"UdK{t}": {t: a}}) for t in
                    ["cpu", "cuda", "rocm", "mps", "xpu", "npu", "neuron", "tpu"]]
    out["known_probe"] = [probe(f"UdK{t}", device=t, cap=80) for t in
                          ["cpu", "cuda", "rocm", "mps", "xpu", "npu", "neuron", "tpu"]]
    return out


@scenario()
def mapping_contexts():
    use, reg, M = PKG.use_kernel_mapping, PKG.register_kernel_mapping, PKG.Mode
    a, b, c = stub("uc_a", factor=2.0), stub("uc_b", factor=3.0), stub("uc_c", factor=4.0)
    out = {}
    reg({"UcL": {"cpu": a}})
    cm = use({"UcL": {"cpu": {M.INFERENCE: b}}, "UcM": {"cpu": c}})
    out["type"] = [hasattr(cm, "__enter__"), hasattr(cm, "__exit__")]
    with cm as bound:
        out["as"] = repr(bound)
        out["in1"] = [probe("UcL"), probe("UcL", kmode="TRAINING"), probe("UcM")]
        with use({"UcM": {"cpu": a}}, inherit_mapping=False):
            out["in2"] = [probe("UcL", use_fallback=False), probe("UcM")]
            reg({"UcN": {"cpu": b}})
            out["in2_reg"] = probe("UcN")
        out["back1"] = [probe("UcL"), probe("UcM"), probe("UcN", use_fallback=False)]
        with use({"UcL": {"cpu": c}}):
            out["in3"] = [probe("UcL"), probe("UcM")]
    out["after"] = [probe("UcL"), probe("UcM", use_fallback=False)]
    out["kw_only"] = attempt(lambda: use({}, False))

    def raising():
        with use({"UcR": {"cpu": b}}):
            raise KeyError("inside")

    out["propagates"] = attempt(raising)
    out["after_raise"] = probe("UcR", use_fallback=False)
    return out


@scenario()
def mapping_failed_enter_leaks():
    """`register_kernel_mapping` failing inside `__enter__` leaves the new mapping installed."""
    use = PKG.use_kernel_mapping
    a, b = stub("fe_a", factor=2.0), stub("fe_b", factor=3.0)
    PKG.register_kernel_mapping({"FeBase": {"cpu": a}})

    def enter():
        with use({"FeL": {"cpu": b, "foo": b}}):
            return "entered"

    out = {"enter": attempt(enter)}
    out["after"] = [probe("FeL"), probe("FeBase")]

    def enter_no_inherit():
        with use({"FeM": {"cpu": a}, "FeN": {"bar": a}}, inherit_mapping=False):
            return "entered"

    out["no_inherit"] = attempt(enter_no_inherit)
    out["after2"] = [probe("FeM"), probe("FeBase", use_fallback=False), probe("FeL")]
    return out


@scenario(shared_default=True)
def mapping_threads():
    """Top-level registrations are seen by new threads; scoped mappings are not."""
    a, b = stub("th_a", factor=2.0), stub("th_b", factor=3.0)
    PKG.register_kernel_mapping({"ThTop": {"cpu": a}})
    results = {}

    def worker(key):
        results[key] = [probe("ThTop", use_fallback=False), probe("ThScoped", use_fallback=False)]

    t = threading.Thread(target=worker, args=("top",))
    t.start()
    t.join(60)

    def scoped_worker():
        with PKG.use_kernel_mapping({"ThWorker": {"cpu": b}}):
            results["worker_scope"] = [probe("ThWorker"), probe("ThTop")]

    t = threading.Thread(target=scoped_worker)
    t.start()
    t.join(60)
    results["after_worker_scope"] = probe("ThWorker", use_fallback=False)

    def registering_worker():
        PKG.register_kernel_mapping({"ThFromWorker": {"cpu": a}})

    t = threading.Thread(target=registering_worker)
    t.start()
    t.join(60)
    results["registered_in_worker"] = probe("ThFromWorker", use_fallback=False)
    with PKG.use_kernel_mapping({"ThScoped": {"cpu": b}}):
        results["main_in"] = [probe("ThTop"), probe("ThScoped")]
        t = threading.Thread(target=worker, args=("in_scope",))
        t.start()
        t.join(60)

        async def task():
            # asyncio tasks copy the context: the scoped mapping is visible
            return [probe("ThTop"), probe("ThScoped", use_fallback=False)]

        import asyncio

        results["asyncio"] = asyncio.run(asyncio.wait_for(task(), 60))
    return results


@scenario()
def mapping_deepcopy_plain_repos():
    """An inheriting context deep-copies the mapping; equal copies still hit the layer cache."""
    LOADS.clear()
    a = stub("dc_a", factor=2.0)
    PKG.register_kernel_mapping({"DcL": {"cpu": a}})
    first = probe("DcL")
    with PKG.use_kernel_mapping({"DcOther": {"cpu": a}}):
        inner = [probe("DcL"), probe("DcOther")]
    return [first, inner, list(LOADS)]


# ------------------------------------------------------------------------------------------
# Mode selection and the has_backward / can_torch_compile matrix


def _flag_sets():
    return {
        "plain": {},
        "nobw": {"has_backward": False},
        "comp": {"can_torch_compile": True},
        "comp_nobw": {"can_torch_compile": True, "has_backward": False},
    }


@scenario()
def mode_matrix_single_key():
    """One repository registered under each key, for each flag set, kernelized in each mode
    with use_fallback True and False."""
    out = {}
    for fname, flags in _flag_sets().items():
        for key in MAPPING_KEYS:
            layer = f"Mx_{fname}_{key.replace('|', '_')}"
            repo = stub(f"mx_{fname}_{key}", factor=2.0, flags=flags)
            PKG.register_kernel_mapping({layer: {"cpu": {mode(key): repo}}})
            for kmode in KERNELIZE_MODES:
                for fb in (True, False, "NO_COMPATIBLE_MODE", "ALL"):
                    out[f"{fname} {key} {kmode} {fb}"] = probe(layer, kmode=kmode,
                                                              use_fallback=fb)
    return out


@scenario()
def mode_matrix_key_subsets():
    """Every non-empty subset of the five keys: which key each kernelize mode picks."""
    out = {}
    for bits in range(1, 32):
        keys = [k for i, k in enumerate(MAPPING_KEYS) if bits & (1 << i)]
        layer = f"Ms{bits}"
        options = {mode(k): stub(f"ms{bits}_{k}", factor=float(2 + i),
                                 flags={"can_torch_compile": True})
                   for i, k in enumerate(keys)}
        PKG.register_kernel_mapping({layer: {"cpu": options}})
        out["+".join(keys)] = {km: probe(layer, kmode=km, use_fallback=False)
                               for km in KERNELIZE_MODES}
    return out


@scenario()
def kernelize_arguments():
    M = PKG.Mode
    kz = PKG.kernelize
    a = stub("ka_a", factor=2.0)
    PKG.register_kernel_mapping({"KaL": {"cpu": a}})
    cls = layer_class("KaL")

    def run(**kwargs):
        module = cls()
        result = kz(module, **kwargs)
        return [result is module, describe(module)]

    class WithParam(nn.Module):
        def __init__(self, device):
            super().__init__()
            self.inner = cls()
            self.w = nn.Parameter(torch.ones(1, device=device))

    class BufferOnly(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = cls()
            self.register_buffer("b", torch.ones(1))

    def infer(model, **kwargs):
        kz(model, mode=M.INFERENCE, **kwargs)
        return describe(model.inner)

    return {
        "no_mode": attempt(lambda: kz(cls())),
        "fallback": attempt(run, mode=M.FALLBACK),
        "compile_only": attempt(run, mode=M.TORCH_COMPILE),
        "none": attempt(run, mode=M._NONE),
        "both_xor": attempt(run, mode=M.INFERENCE ^ M.TRAINING, device="cpu"),
        "mode6": attempt(run, mode=M(6), device="cpu"),
        "mode14_no_layer": attempt(lambda: kz(layer_class("KaNothing")(), mode=M(6),
                                              device="cpu")),
        "cuda0": attempt(run, mode=M.INFERENCE, device="cuda:0"),
        "meta_str": attempt(run, mode=M.INFERENCE, device="meta"),
        "upper": attempt(run, mode=M.INFERENCE, device="CPU"),
        "torch_device": attempt(run, mode=M.INFERENCE, device=torch.device("cpu")),
        "torch_meta": attempt(run, mode=M.INFERENCE, device=torch.device("meta"),
                              use_fallback=False),
        "device_obj": attempt(run, mode=M.INFERENCE, device=PKG.Device("cpu")),
        "no_params": attempt(run, mode=M.INFERENCE),
        "buffer_only": attempt(infer, BufferOnly()),
        "param_cpu": attempt(infer, WithParam("cpu")),
        "param_meta": attempt(infer, WithParam("meta"), use_fallback=False),
        "positional": attempt(lambda: kz(cls(), M.INFERENCE)),
        "fallback_int": attempt(run, mode=M.INFERENCE, device="cpu", use_fallback=1),
        "fallback_none": attempt(run, mode=M.INFERENCE, device="cpu", use_fallback=None),
    }


# ------------------------------------------------------------------------------------------
# Capability ranges on simulated CUDA / ROCm devices


@scenario()
def capability_ranges():
    Device, CP, RP = PKG.Device, PKG.CUDAProperties, PKG.ROCMProperties
    out = {}
    for dev, Props in (("cuda", CP), ("rocm", RP)):
        layer = f"Cap_{dev}"
        reg = {
            Device(dev, Props(75, 89)): stub(f"{dev}_B", factor=2.0),
            Device(dev, Props(80, 89)): stub(f"{dev}_A", factor=3.0),
            dev: stub(f"{dev}_ANY", factor=4.0),
            Device(dev, Props(90, 90)): stub(f"{dev}_H", factor=5.0),
        }
        PKG.register_kernel_mapping({layer: reg})
        out[dev] = {cap: probe(layer, device=dev, cap=cap, use_fallback=False)
                    for cap in (-1, 0, 70, 74, 75, 79, 80, 86, 89, 90, 91, 100, 1000)}
        only = f"CapOnly_{dev}"
        PKG.register_kernel_mapping({only: {Device(dev, Props(80, 86)): stub(f"{dev}_O")}})
        out[dev + "_only"] = {cap: [probe(only, device=dev, cap=cap, use_fallback=fb)
                                    for fb in (True, False, "NO_COMPATIBLE_PROPERTIES",
                                               "NO_DEVICE")]
                              for cap in (79, 80, 86, 87)}
        # the other device type does not see these
        out[dev + "_cpu"] = probe(layer, device="cpu", use_fallback=False)
    return out


@scenario()
def capability_queried_only_when_needed():
    """The capability is read only for a cuda/rocm container of the requested device type; an
    error reading it propagates whatever use_fallback says."""
    Device, CP = PKG.Device, PKG.CUDAProperties
    calls = []

    def failing():
        calls.append("query")
        raise RuntimeError("Found no NVIDIA driver on your system (simulated).")

    PKG.register_kernel_mapping({"CqL": {"cpu": stub("cq_cpu", factor=2.0),
                                         Device("cuda", CP(80, 89)): stub("cq_cuda", factor=3.0),
                                         "rocm": stub("cq_rocm", factor=4.0)}})
    PKG.register_kernel_mapping({"CqCpuOnly": {"cpu": stub("cq_only", factor=2.0)}})
    repos = layer_mod(".repos")
    repos._find_capability = failing
    out = {"cpu": probe("CqL", use_fallback=False), "xpu": probe("CqL", device="xpu"),
           "cuda_no_container": probe("CqCpuOnly", device="cuda"),
           "calls_before": list(calls)}
    out["cuda"] = [probe("CqL", device="cuda", use_fallback=fb) for fb in (True, "ALL", False)]
    out["rocm"] = probe("CqL", device="rocm", use_fallback="ALL")
    out["queried"] = bool(calls)
    return out


@scenario()
def mode_keys_outside_priority_lists():
    """Keys no kernelize mode tries (`TORCH_COMPILE`, `_NONE`, combinations built with `^`)."""
    M = PKG.Mode
    PKG.register_kernel_mapping({"MkL": {"cpu": {M.TORCH_COMPILE: stub("mk_tc", factor=2.0),
                                                 M._NONE: stub("mk_none", factor=3.0),
                                                 M.INFERENCE ^ M.TRAINING: stub("mk_both")}}})
    return {km: [probe("MkL", kmode=km, use_fallback=fb) for fb in (True, False)]
            for km in KERNELIZE_MODES}


@scenario()
def capability_replacement():
    """An identical range replaces the previous mode dict; `cuda`, `Device("cuda")` and the
    range [0, maxsize] are the same range."""
    Device, CP = PKG.Device, PKG.CUDAProperties
    out = {}
    PKG.register_kernel_mapping({"CrL": {Device("cuda", CP(80, 89)): stub("cr_1", factor=2.0)}})
    PKG.register_kernel_mapping({"CrL": {Device("cuda", CP(80, 89)): stub("cr_2", factor=3.0)}})
    out["same_range"] = probe("CrL", device="cuda", cap=85)
    PKG.register_kernel_mapping({"CrL": {"cuda": stub("cr_any1", factor=4.0)}})
    PKG.register_kernel_mapping({"CrL": {Device("cuda"): stub("cr_any2", factor=5.0)}})
    out["any2"] = [probe("CrL", device="cuda", cap=c) for c in (70, 85)]
    PKG.register_kernel_mapping(
        {"CrL": {Device("cuda", CP(0, sys.maxsize)): stub("cr_any3", factor=6.0)}})
    out["any3"] = [probe("CrL", device="cuda", cap=c) for c in (70, 85)]
    with PKG.use_kernel_mapping({"CrL": {Device("cuda", CP(84, 86)): stub("cr_in", factor=7.0)}}):
        out["scoped"] = [probe("CrL", device="cuda", cap=c) for c in (83, 85)]
    out["after"] = [probe("CrL", device="cuda", cap=c) for c in (83, 85)]
    # mode dicts per range; mode selection inside the chosen range only
    PKG.register_kernel_mapping({"CrM": {
        Device("cuda", CP(80, 89)): {PKG.Mode.TRAINING: stub("crm_t", factor=2.0)},
        "cuda": {PKG.Mode.INFERENCE: stub("crm_i", factor=3.0)},
    }})
    out["modes"] = {km: [probe("CrM", device="cuda", kmode=km, cap=c, use_fallback=False)
                         for c in (70, 85)] for km in KERNELIZE_MODES}
    return out


@scenario()
def capability_distinct_widths_random():
    """Property test with distinct widths (no ties): the smallest containing range wins."""
    import random

    rng = random.Random(1234)
    Device, CP = PKG.Device, PKG.CUDAProperties
    out = []
    for trial in range(12):
        layer = f"Cw{trial}"
        widths = rng.sample(range(0, 40), 6)
        ranges = []
        for i, w in enumerate(widths):
            lo = rng.randrange(60, 100)
            ranges.append((lo, lo + w))
            PKG.register_kernel_mapping(
                {layer: {Device("cuda", CP(lo, lo + w)): stub(f"cw{trial}_{i}", factor=float(i))}})
        caps = sorted(rng.sample(range(55, 145), 8))
        out.append([ranges, {c: probe(layer, device="cuda", cap=c, use_fallback=False)
                             for c in caps}])
    return out


@scenario()
def capability_ties():
    """DELIBERATE DIFFERENCE: equal-width ranges that both contain the capability. The
    reference breaks the tie by id() (arbitrary); kernelhub picks the last registered."""
    Device, CP = PKG.Device, PKG.CUDAProperties
    out = []
    for trial in range(8):
        layer = f"Ct{trial}"
        first, second = ((80, 85), (82, 87)) if trial % 2 == 0 else ((82, 87), (80, 85))
        PKG.register_kernel_mapping({layer: {Device("cuda", CP(*first)): stub(f"ct{trial}_first")}})
        PKG.register_kernel_mapping({layer: {Device("cuda", CP(*second)): stub(f"ct{trial}_second")}})
        out.append(probe(layer, device="cuda", cap=84)[0])
    # the reference's AVL duplicate: re-inserting 80-85 after rotations
    dup = []
    for trial in range(8):
        layer = f"Cd{trial}"
        for i, rng_ in enumerate([(80, 85), (80, 89), (80, 95)]):
            PKG.register_kernel_mapping({layer: {Device("cuda", CP(*rng_)): stub(f"cd{trial}_{i}")}})
        PKG.register_kernel_mapping({layer: {Device("cuda", CP(80, 85)): stub(f"cd{trial}_new")}})
        dup.append(probe(layer, device="cuda", cap=82)[0])
    return {"ties": out, "duplicate": dup}


# ------------------------------------------------------------------------------------------
# Failure matrix


@scenario()
def failure_matrix():
    """{no entry, empty entry, wrong device, no capability, no mode, missing path, missing
    `layers`, missing layer} x every use_fallback value: outcome and logs."""
    Device, CP, M = PKG.Device, PKG.CUDAProperties, PKG.Mode
    cases = {
        "no_entry": ("FmNone", None, "cpu"),
        "empty_entry": ("FmEmpty", {}, "cpu"),
        "wrong_device": ("FmDev", {"cuda": stub("fm_dev")}, "cpu"),
        "no_capability": ("FmCap", {Device("cuda", CP(90, 90)): stub("fm_cap")}, "cuda"),
        "no_mode": ("FmMode", {"cpu": {M.TRAINING: stub("fm_mode")}}, "cpu"),
        "missing_path": ("FmPath", {"cpu": local("does-not-exist", "Double")}, "cpu"),
        "missing_layers": ("FmLayers", {"cpu": local("knolayers", "Double")}, "cpu"),
        "empty_layers": ("FmEmptyLayers", {"cpu": local("kemptylayers", "Double")}, "cpu"),
        "missing_layer": ("FmLayer", {"cpu": local("klayers", "Missing")}, "cpu"),
        "fnf_from_load": ("FmFnf", {"cpu": StubRepo("fm_fnf", FileNotFoundError("gone"))}, "cpu"),
        "oserror_from_load": ("FmOs", {"cpu": StubRepo("fm_os", OSError("other"))}, "cpu"),
    }
    out = {}
    for case, (layer, entry, device) in cases.items():
        if entry is not None:
            PKG.register_kernel_mapping({layer: entry})
        for fb in FALLBACKS:
            kmode = "TRAINING|TORCH_COMPILE" if case == "no_mode" else "INFERENCE"
            out[f"{case} {fb}"] = probe(layer, kmode=kmode, device=device, cap=80,
                                        use_fallback=fb)
    return out


# ------------------------------------------------------------------------------------------
# Kernel layer validation


@scenario()
def validation():
    out = {}

    class Base(nn.Module):
        def forward(self, x):
            return x

    def fwd2(self, x, y):
        return x

    def fwd_star(self, *x):
        return x

    def fwd_kw(self, *, x):
        return x

    def fwd_renamed(self, hidden):
        return hidden * 2

    kernels = {
        "ok": kernel_class("v_ok", factor=2.0),
        "renamed": kernel_class("v_renamed", forward=fwd_renamed),
        "extra_repr": kernel_class("v_extra_repr", extra={"extra_repr": lambda self: "k"}),
        "annotated_flag": kernel_class("v_annot", extra={"__annotations__": {"has_backward": bool},
                                                         "has_backward": False}),
        "init": kernel_class("v_init", extra={"__init__": lambda self: nn.Module.__init__(self)}),
        "inherited_init": kernel_class("v_inh_init", bases=(nn.Linear,)),
        "method": kernel_class("v_method", extra={"helper": lambda self: 1}),
        "classvar": kernel_class("v_classvar", extra={"eps": 1e-6}),
        "property": kernel_class("v_prop", extra={"size": property(lambda self: 1)}),
        "static_forward": kernel_class("v_static", forward=staticmethod(lambda x: x)),
        "two_args": kernel_class("v_two", forward=fwd2),
        "star_args": kernel_class("v_star", forward=fwd_star),
        "kw_only": kernel_class("v_kw", forward=fwd_kw),
        "flags_only": kernel_class("v_flags", flags={"has_backward": True,
                                                     "can_torch_compile": True}),
        "not_module": type("NotModule", (), {"forward": lambda self, x: x}),
        "subclass_of_base": type("SubBase", (Base,), {}),
    }
    for name, cls in kernels.items():
        layer = f"Va_{name}"
        PKG.register_kernel_mapping({layer: {"cpu": StubRepo(f"va_{name}", cls)}})
        out[name] = [probe(layer, use_fallback=fb) for fb in (True, "ALL")]
    # non-class layers
    for name, obj in {"function": lambda self, x: x, "int": 5, "none_layer": None}.items():
        layer = f"Vb_{name}"
        PKG.register_kernel_mapping({layer: {"cpu": StubRepo(f"vb_{name}", obj)}})
        out[name] = probe(layer)
    # local kernel layers breaking the rules
    for lname in ("WithInit", "WithMember", "TwoArgs", "NotAModule", "Double"):
        layer = f"Vl_{lname}"
        PKG.register_kernel_mapping({layer: {"cpu": local("klayers", lname)}})
        out["local_" + lname] = probe(layer, use_fallback="ALL")
    # the cache is keyed by repository: a second class with another signature skips validation
    shared = stub("va_shared", factor=2.0)
    PKG.register_kernel_mapping({"VaS": {"cpu": shared}})

    def two(self, x, y):
        return x

    @PKG.use_kernel_forward_from_hub("VaS")
    class TwoInputs(nn.Module):
        forward = two

    first = probe("VaS")
    module = TwoInputs()
    out["cache"] = [first, attempt(lambda: (PKG.kernelize(module, mode=PKG.Mode.INFERENCE,
                                                          device="cpu"), describe(module))[1])]
    # a failed validation is not cached: the repository is loaded again
    LOADS.clear()
    PKG.register_kernel_mapping({"VaF": {"cpu": StubRepo("va_fail", kernels["method"])}})
    out["not_cached"] = [probe("VaF"), probe("VaF"), list(LOADS)]
    return out


# ------------------------------------------------------------------------------------------
# Models


def _model_classes(prefix, deco_pkg=None):
    """Several decorated layer classes, nested modules, a function attached through
    use_kernelized_func and another registered as a submodule."""
    deco = (deco_pkg or PKG).use_kernel_forward_from_hub
    funcs = (deco_pkg or PKG).use_kernelized_func

    def norm_forward(self, x):
        return x * self.weight

    label_forward(norm_forward, "orig:Norm")
    Norm = deco(f"{prefix}Norm")(type("Norm", (nn.Module,), {
        "__init__": lambda self: (nn.Module.__init__(self),
                                  setattr(self, "weight", nn.Parameter(torch.ones(4))))[0],
        "forward": norm_forward}))

    def act_forward(self, x):
        return torch.relu(x)

    label_forward(act_forward, "orig:Act")

    def act_init(self, enabled):
        nn.Module.__init__(self)
        self.enabled = enabled

    Act = deco(f"{prefix}Act", lambda module: module.enabled)(
        type("Act", (nn.Module,), {"__init__": act_init, "forward": act_forward}))

    def triple(x):
        return x * 3

    scale = deco(f"{prefix}Scale")(triple)

    def shift(x):
        return x + 0.5

    shift_mod = deco(f"{prefix}Shift", lambda module: False)(shift)

    class Block(nn.Module):
        def __init__(self, enabled):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            with torch.no_grad():
                self.lin.weight.copy_(torch.eye(4))
                self.lin.bias.zero_()
            self.norm = Norm()
            self.act = Act(enabled)

        def forward(self, x):
            return self.act(scale(self.norm(self.lin(x))))

    Block = funcs(scale)(Block)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(True), Block(False)])
            self.shift = shift_mod
            self.final = Norm()

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.final(self.shift(x))

    return Model, scale, shift_mod


def _model_report(model, scale):
    out = {name or "<root>": describe(m) for name, m in model.named_modules()
           if "forward" in m.__dict__ or hasattr(type(m), "kernel_layer_name")}
    out["_kernel_funcs"] = {name: [k for k in m.__dict__.get("_kernel_funcs", {})]
                            for name, m in model.named_modules()
                            if "_kernel_funcs" in m.__dict__}
    x = torch.tensor([[-1.0, 0.5, 2.0, -3.0]])
    out["output"] = [round(v, 5) for v in model(x).flatten().tolist()]
    out["scale_global"] = [describe(scale), scale(torch.ones(1)).tolist()]
    return out


def _model_mapping(prefix):
    M = PKG.Mode
    return {
        f"{prefix}Norm": {"cpu": {M.FALLBACK: local("klayers", "DoubleWeight")}},
        f"{prefix}Act": {"cpu": {
            M.INFERENCE: local("klayers", "ReluPlus"),
            M.TRAINING: local("klayers", "Double"),
            M.TRAINING | M.TORCH_COMPILE: local("klayers", "Compilable"),
        }},
        f"{prefix}Scale": {"cpu": {
            M.INFERENCE | M.TORCH_COMPILE: PKG.LocalFuncRepository(ROOT / "klayers",
                                                                   func_name="comp"),
            M.FALLBACK: PKG.LocalFuncRepository(ROOT / "klayers", func_name="quad"),
        }},
        f"{prefix}Shift": {"cpu": PKG.LocalFuncRepository(ROOT / "klayers", func_name="triple")},
    }


@scenario()
def model_all_modes():
    out = {}
    for kmode in KERNELIZE_MODES:
        for fb in (True, False, "ALL", "NO_COMPATIBLE_MODE"):
            prefix = "Md"
            Model, scale, _ = _model_classes(prefix)
            model = Model()
            with PKG.use_kernel_mapping(_model_mapping(prefix)):
                res = attempt(lambda: PKG.kernelize(model, mode=mode(kmode),
                                                    use_fallback=fallback_value(fb)) is model)
            out[f"{kmode} {fb}"] = [res, _model_report(model, scale)]
    return out


@scenario()
def model_rekernelize():
    """Idempotence, switching modes, clearing the mapping, a condition that turns false."""
    prefix = "Mr"
    Model, scale, _ = _model_classes(prefix)
    model = Model()
    M = PKG.Mode
    steps = {}
    with PKG.use_kernel_mapping(_model_mapping(prefix)):
        PKG.kernelize(model, mode=M.INFERENCE)
        steps["inference"] = _model_report(model, scale)
        PKG.kernelize(model, mode=M.INFERENCE)
        steps["again"] = _model_report(model, scale)
        PKG.kernelize(model, mode=M.TRAINING | M.TORCH_COMPILE)
        steps["train_compile"] = _model_report(model, scale)
        model.blocks[0].act.enabled = False
        PKG.kernelize(model, mode=M.INFERENCE)
        steps["condition_off"] = _model_report(model, scale)
        with PKG.use_kernel_mapping({f"{prefix}Norm": {}, f"{prefix}Act": {}}):
            PKG.kernelize(model, mode=M.INFERENCE)
            steps["emptied"] = _model_report(model, scale)
    with PKG.use_kernel_mapping({}, inherit_mapping=False):
        PKG.kernelize(model, mode=M.TRAINING)
        steps["no_mapping"] = _model_report(model, scale)
    # training through kernel layers: the kernel's forward reads the original's parameters
    with PKG.use_kernel_mapping(_model_mapping(prefix)):
        PKG.kernelize(model, mode=M.TRAINING)
    model.zero_grad()
    x = torch.tensor([[-1.0, 0.5, 2.0, -3.0]], requires_grad=True)
    model(x).sum().backward()
    steps["grads"] = {name: [round(v, 4) for v in p.grad.flatten().tolist()]
                      for name, p in model.named_parameters() if p.grad is not None}
    steps["input_grad"] = [round(v, 4) for v in x.grad.flatten().tolist()]
    calls = []
    model.final.register_forward_hook(lambda *a: calls.append("hook"))
    with PKG.use_kernel_mapping(_model_mapping(prefix)):
        PKG.kernelize(model, mode=M.INFERENCE)
    model(torch.ones(1, 4))
    steps["hooks"] = calls
    return steps


@scenario(interop=True)
def model_interop_reference_decorated():
    """Classes decorated by the reference `kernels` kernelized by the package under test."""
    import kernels as reference

    prefix = "Ir"
    Model, scale, _ = _model_classes(prefix, deco_pkg=reference)
    model = Model()
    with PKG.use_kernel_mapping(_model_mapping(prefix)):
        res = attempt(lambda: PKG.kernelize(model, mode=PKG.Mode.INFERENCE) is model)
    return [res, _model_report(model, scale)]


@scenario(interop=True)
def interop_reference_repositories():
    """The reference's repository objects in the package's mapping (repositories are duck
    typed: load, eq, hash, str)."""
    import kernels as reference

    PKG.register_kernel_mapping({
        "IrpL": {"cpu": reference.LocalLayerRepository(ROOT / "klayers", layer_name="Double")},
        "IrpF": {"cpu": reference.LocalFuncRepository(ROOT / "klayers", func_name="triple")},
        "IrpLocked": {"cpu": reference.LockedLayerRepository(
            "org/kern", lockfile=ROOT / "good.lock", layer_name="L")},
    })
    fn = PKG.use_kernel_forward_from_hub("IrpF")(lambda x: x)
    host = nn.Module()
    host.f = fn
    res = attempt(lambda: PKG.kernelize(host, mode=PKG.Mode.INFERENCE, device="cpu"))
    return {"layer": probe("IrpL", use_fallback=False),
            "func": [res if res[0] == "error" else "ok", describe(fn)],
            "locked_in_context": attempt(lambda: PKG.use_kernel_mapping({}).__enter__())}


@scenario(interop=True)
def model_interop_kernelized_by_reference():
    """Classes decorated by the package under test, kernelized by the reference."""
    import kernels as reference

    prefix = "Ik"
    Model, scale, _ = _model_classes(prefix)
    model = Model()
    R = reference
    mapping = {
        f"{prefix}Norm": {"cpu": R.LocalLayerRepository(ROOT / "klayers", layer_name="DoubleWeight")},
        f"{prefix}Act": {"cpu": R.LocalLayerRepository(ROOT / "klayers", layer_name="ReluPlus")},
        # a layer class for the wrapped function (LocalFuncRepository would log on the
        # reference's logger, which the run of the package under test does not capture)
        f"{prefix}Scale": {"cpu": R.LocalLayerRepository(ROOT / "klayers", layer_name="Double")},
    }
    with R.use_kernel_mapping(mapping):
        res = attempt(lambda: R.kernelize(model, mode=R.Mode.INFERENCE) is model)
    return [res, _model_report(model, scale)]


@scenario()
def transformers_style_attributes():
    """`kernel_layer_name` set directly on a class (no condition), an instance attribute
    (ignored), an inherited one, and kernel_condition = None."""
    a = stub("ts_a", factor=2.0)
    PKG.register_kernel_mapping({"TsL": {"cpu": a}})

    def forward(self, x):
        return x + 1

    label_forward(forward, "orig:Plain")
    Plain = type("Plain", (nn.Module,), {"forward": forward, "kernel_layer_name": "TsL"})
    NoneCond = type("NoneCond", (nn.Module,), {"forward": forward, "kernel_layer_name": "TsL",
                                               "kernel_condition": None})
    Sub = type("Sub", (Plain,), {})
    inst = nn.Identity()
    inst.kernel_layer_name = "TsL"
    PKG.register_kernel_mapping({"5": {"cpu": stub("ts_5", factor=5.0)}})
    IntName = type("IntName", (nn.Module,), {"forward": forward, "kernel_layer_name": 5})
    def boom(module):
        raise RuntimeError("condition failed")

    Raising = PKG.use_kernel_forward_from_hub("TsL", boom)(
        type("Raising", (nn.Module,), {"forward": forward}))
    CondTrue = PKG.use_kernel_forward_from_hub("TsL", lambda m: 1)(
        type("CondTrue", (nn.Module,), {"forward": forward}))
    out = {"condition_attr": [type(Raising.__dict__["kernel_condition"]).__name__,
                              Raising.kernel_condition is boom]}
    # re-applying the decorator overwrites both attributes
    Twice = PKG.use_kernel_forward_from_hub("TsOther", boom)(
        type("Twice", (nn.Module,), {"forward": forward}))
    same = PKG.use_kernel_forward_from_hub("TsL")(Twice)
    out["twice_attrs"] = [same is Twice, Twice.kernel_layer_name, Twice.kernel_condition(Twice())]
    for name, module in (("plain", Plain()), ("none_cond", NoneCond()), ("sub", Sub()),
                         ("twice", Twice()),
                         ("instance_attr", inst), ("raising", Raising()), ("int_name", IntName()),
                         ("truthy", CondTrue())):
        res = attempt(lambda: PKG.kernelize(module, mode=PKG.Mode.INFERENCE, device="cpu"))
        out[name] = [res if res[0] == "error" else "ok", describe(module)]
    return out


# ------------------------------------------------------------------------------------------
# Functions


@scenario()
def functions():
    M = PKG.Mode
    deco = PKG.use_kernel_forward_from_hub
    out = {}

    def add(x: torch.Tensor, y: int = 2, *rest, z, **kw) -> torch.Tensor:
        return x + y

    add.has_backward = False
    add.can_torch_compile = True
    fm = deco("FnAdd")(add)
    out["wrapped"] = {
        "type": type(fm).__name__,
        "is_module": isinstance(fm, nn.Module),
        "has_name": hasattr(fm, "__name__"),
        "has_wrapped": hasattr(fm, "__wrapped__"),
        "layer_name": [fm.kernel_layer_name, type(fm).kernel_layer_name],
        "flags": [type(fm).has_backward, type(fm).can_torch_compile],
        "forward_sig": str(inspect.signature(type(fm).forward)),
        "call": fm(torch.ones(1), 3, z=1).tolist(),
        "condition": fm.kernel_condition(fm),
        "singleton_twice": deco("FnAdd")(add) is fm,
    }
    for name, obj in {"partial": functools.partial(add, y=1), "builtin": len, "int": 5,
                      "bound": nn.Identity().forward, "callable_obj": nn.Identity(),
                      "lambda": lambda x: x}.items():
        res = attempt(deco("FnBad"), obj)
        if res[0] == "ok":
            res = ["ok", type(res[1]).__name__]
        out[name] = res

    def plain(x):
        return x

    out["undecorated"] = attempt(lambda: PKG.use_kernelized_func(plain)(type("H", (nn.Module,), {})))
    # the reference checks when the decorator is applied, not when the factory is called
    out["undecorated_factory_only"] = attempt(lambda: callable(PKG.use_kernelized_func(plain)))
    out["neither_attr"] = attempt(lambda: PKG.use_kernelized_func(5)(type("H", (nn.Module,), {})))

    fa = deco("FnA")(lambda x: x)
    fb = deco("FnB")(lambda x: x * 2)

    class Host(nn.Module):
        def __init__(self, a, b=1):
            super().__init__()
            self.a = a

        def forward(self, x):
            return x

    returned = PKG.use_kernelized_func(fa, fb, fm)(Host)
    host = Host(1, b=2)
    out["kernelized_func"] = {
        "same_class": returned is Host,
        "signature": str(inspect.signature(Host)),
        "keys": list(host.__dict__.get("_kernel_funcs", {})),
        "not_submodule": [n for n, _ in host.named_children()],
        "values_are": [v is w for v, w in zip(host.__dict__.get("_kernel_funcs", {}).values(),
                                             (fa, fb, fm))],
        "subclass": list(type("HostSub", (Host,), {})(1).__dict__.get("_kernel_funcs", {})),
        "replace_returns": repr(PKG.replace_kernel_forward_from_hub(type("R", (nn.Module,), {}),
                                                                    "Rname")),
    }
    # a function with a false condition: ignored through _kernel_funcs, honoured as submodule
    def quadruple(x):
        return x * 100

    off = deco("FnOff", lambda m: False)(quadruple)
    PKG.register_kernel_mapping({"FnOff": {"cpu": PKG.LocalFuncRepository(ROOT / "klayers",
                                                                          func_name="triple")}})
    holder = PKG.use_kernelized_func(off)(type("Holder", (nn.Module,), {
        "forward": lambda self, x: off(x)}))()
    PKG.kernelize(holder, mode=M.INFERENCE, device="cpu")
    out["via_funcs"] = [describe(off), off(torch.ones(1)).tolist()]

    def quintuple(x):
        return x * 1000

    off2 = deco("FnOff2", lambda m: False)(quintuple)
    PKG.register_kernel_mapping({"FnOff2": {"cpu": PKG.LocalFuncRepository(ROOT / "klayers",
                                                                           func_name="triple")}})
    sub_host = nn.Module()
    sub_host.f = off2
    PKG.kernelize(sub_host, mode=M.INFERENCE, device="cpu")
    out["via_submodule"] = [describe(off2), off2(torch.ones(1)).tolist()]
    # function repositories and their loading errors
    def three(x):
        return x

    f3 = deco("FnThree")(three)
    cases = {"triple": "triple", "missing": "nope", "two_args": "two", "quad_nobw": "quad"}
    for case, fname in cases.items():
        PKG.register_kernel_mapping({f"FnR{case}": {"cpu": {
            M.TRAINING: PKG.LocalFuncRepository(ROOT / "klayers", func_name=fname)}}})
        host2 = PKG.use_kernelized_func(deco(f"FnR{case}")(three))(
            type("H2", (nn.Module,), {"forward": lambda self, x: x}))()
        res = attempt(lambda: PKG.kernelize(host2, mode=M.TRAINING, device="cpu"))
        func_module = list(host2.__dict__["_kernel_funcs"].values())[0]
        out[f"repo_{case}"] = [res[0] if res[0] == "ok" else res, describe(func_module)]
    out["f3"] = describe(f3)
    return out


@scenario()
def func_deprecations():
    """The deprecated function API logs on `<pkg>.layer.func` (no Python warning)."""
    out = {}
    out["use_kernel_func_from_hub"] = attempt(lambda: type(
        PKG.use_kernel_func_from_hub("DepF")(lambda x: x)).__name__)
    out["positional_condition"] = attempt(lambda: PKG.use_kernel_func_from_hub("DepF", None))
    out["FuncRepository"] = attempt(lambda: str(PKG.FuncRepository("org/f", func_name="f",
                                                                  revision="abc")))
    out["FuncRepository_bad"] = attempt(lambda: PKG.FuncRepository("org/f", func_name="f"))
    out["LocalFuncRepository"] = attempt(lambda: str(PKG.LocalFuncRepository(Path("/x"),
                                                                            func_name="f")))
    out["LockedFuncRepository_missing"] = attempt(
        lambda: PKG.LockedFuncRepository("org/f", func_name="f", lockfile=ROOT / "nope.lock"))
    return out


# ------------------------------------------------------------------------------------------
# Repositories


LOCK_COMMIT = "0123456789abcdef0123456789ABCDEF01234567"


def _write_locks(root: Path):
    good = [
        {"dependency": {"repo-id": "org/kern", "version": 1}, "lock": {"commit": LOCK_COMMIT}},
        {"dependency": {"repo-id": "org/kern", "version": 2}, "lock": {"commit": "f" * 40}},
        {"dependency": {"repo-id": "org/other", "revision": "main"},
         "lock": {"commit": "e" * 64}},
    ]
    write(root / "good.lock", json.dumps(good))
    write(root / "old.lock", json.dumps([{"repo_id": "org/kern", "sha": "a" * 40,
                                          "variants": {}}]))
    write(root / "extra.lock", json.dumps([dict(good[0], extra=1)]))
    write(root / "short.lock", json.dumps([{"dependency": {"repo-id": "org/kern", "version": 1},
                                            "lock": {"commit": "abc123"}}]))
    write(root / "both.lock", json.dumps([{"dependency": {"repo-id": "org/kern", "version": 1,
                                                          "revision": "x"},
                                           "lock": {"commit": "a" * 40}}]))
    write(root / "notjson.lock", "not json")
    write(root / "empty.lock", "[]")


@scenario()
def repositories():
    P = PKG
    out = {}
    ctor = {
        "layer_rev": lambda: P.LayerRepository("org/k", layer_name="L", revision="abc"),
        "layer_both": lambda: P.LayerRepository("org/k", layer_name="L", revision="a", version=1),
        "layer_neither": lambda: P.LayerRepository("org/k", layer_name="L"),
        "layer_positional": lambda: P.LayerRepository("org/k", "L", revision="a"),
        "layer_no_name": lambda: P.LayerRepository("org/k", revision="a"),
        "layer_kw_repo": lambda: P.LayerRepository(repo_id="org/k", layer_name="L", revision="a"),
        "local": lambda: P.LocalLayerRepository(Path("/x"), layer_name="L"),
        "local_str": lambda: P.LocalLayerRepository("/x", layer_name="L"),
        "local_positional": lambda: P.LocalLayerRepository(Path("/x"), "L"),
        "func_rev": lambda: P.FuncRepository("org/k", func_name="f", revision="abc"),
        "func_user_agent": lambda: P.FuncRepository("org/k", func_name="f", revision="a",
                                                    user_agent="x"),
        "func_both": lambda: P.FuncRepository("org/k", func_name="f", revision="a", version=1),
        "local_func": lambda: P.LocalFuncRepository(Path("/x"), func_name="f"),
        "locked": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock",
                                                  layer_name="L"),
        "locked_other": lambda: P.LockedLayerRepository("org/other", lockfile=ROOT / "good.lock",
                                                        layer_name="L"),
        "locked_func": lambda: P.LockedFuncRepository("org/kern", lockfile=ROOT / "good.lock",
                                                      func_name="f"),
        "locked_not_locked": lambda: P.LockedLayerRepository("org/none", lockfile=ROOT / "good.lock",
                                                             layer_name="L"),
        "locked_missing_file": lambda: P.LockedLayerRepository("org/kern",
                                                               lockfile=ROOT / "nope.lock",
                                                               layer_name="L"),
        "locked_old": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "old.lock",
                                                      layer_name="L"),
        "locked_extra": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "extra.lock",
                                                        layer_name="L"),
        "locked_short": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "short.lock",
                                                        layer_name="L"),
        "locked_both": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "both.lock",
                                                       layer_name="L"),
        "locked_notjson": lambda: P.LockedLayerRepository("org/kern",
                                                          lockfile=ROOT / "notjson.lock",
                                                          layer_name="L"),
        "locked_empty": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "empty.lock",
                                                        layer_name="L"),
        "locked_no_lockfile": lambda: P.LockedLayerRepository("org/kern", layer_name="L"),
    }
    made = {}
    for name, make in ctor.items():
        res = attempt(make)
        if res[0] == "ok":
            made[name] = res[1]
            res = ["ok", attempt(str, res[1]), type(res[1]).__name__,
                   getattr(res[1], "layer_name", None), getattr(res[1], "func_name", None)]
        out[name] = res

    def again(name):
        return ctor[name]()

    eq = {}
    for name, obj in made.items():
        other = attempt(again, name)
        if other[0] != "ok":
            continue
        other = other[1]
        eq[name] = [obj == other, hash(obj) == hash(other), obj != other]
    out["equal_copies"] = eq
    L = P.LayerRepository
    pairs = {
        "user_agent_ignored": (L("o/k", layer_name="L", revision="a", user_agent="x"),
                               L("o/k", layer_name="L", revision="a", user_agent={"y": 1})),
        "rev_vs_version": (L("o/k", layer_name="L", revision="1"), L("o/k", layer_name="L", version=1)),
        "trust_list": (L("o/k", layer_name="L", revision="a", trust_remote_code=["o/k"]),
                       L("o/k", layer_name="L", revision="a", trust_remote_code=["o/k"])),
        "trust_bool_list": (L("o/k", layer_name="L", revision="a", trust_remote_code=True),
                            L("o/k", layer_name="L", revision="a", trust_remote_code=["o/k"])),
        "path_vs_str": (P.LocalLayerRepository(Path("/x"), layer_name="L"),
                        P.LocalLayerRepository("/x", layer_name="L")),
        "local_layer_vs_func": (P.LocalLayerRepository(Path("/x"), layer_name="L"),
                                P.LocalFuncRepository(Path("/x"), func_name="L")),
        "layer_vs_local": (L("/x", layer_name="L", revision="a"),
                           P.LocalLayerRepository(Path("/x"), layer_name="L")),
        "func_vs_layer": (P.FuncRepository("o/k", func_name="L", revision="a"),
                          L("o/k", layer_name="L", revision="a")),
    }
    out["pairs"] = {k: [a == b, hash(a) == hash(b)] for k, (a, b) in pairs.items()}
    if "locked" in made and "locked_func" in made:
        out["locked_vs"] = [made["locked"] == made.get("locked_other"),
                            made["locked"] == made["locked_func"]]
    trust = ["o/k"]
    repo = L("o/k", layer_name="L", revision="a", trust_remote_code=trust)
    h = hash(repo)
    trust.append("o/z")
    out["trust_copied"] = [hash(repo) == h, repo == L("o/k", layer_name="L", revision="a",
                                                      trust_remote_code=["o/k"])]
    out["locked_attrs"] = attempt(lambda: [hasattr(made["locked"], "kernel_locks"),
                                           hasattr(made["locked"], "kernel_dep")])
    return out


@scenario()
def local_str_path():
    """DELIBERATE DIFFERENCE: a `str` repo_path. The reference fails at load time with a
    TypeError (`str / str`); kernelhub reads it as the same folder."""
    PKG.register_kernel_mapping({"RpStr": {"cpu": PKG.LocalLayerRepository(
        str(ROOT / "klayers"), layer_name="Double")}})
    PKG.register_kernel_mapping({"RpStrF": {"cpu": PKG.LocalFuncRepository(
        str(ROOT / "klayers"), func_name="triple")}})
    fn = PKG.use_kernel_forward_from_hub("RpStrF")(lambda x: x)
    host = nn.Module()
    host.f = fn
    res = attempt(lambda: PKG.kernelize(host, mode=PKG.Mode.INFERENCE, device="cpu",
                                        use_fallback=PKG.KernelizeFallback.ALL))
    return {"layer": probe("RpStr", use_fallback="ALL"),
            "func": [res if res[0] == "error" else "ok", describe(fn)]}


@scenario()
def locked_attributes():
    """The public attributes a locked repository carries (layers.md §7.4): the matched
    dependency and all locks, indexable by the dependency."""
    repo = PKG.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock", layer_name="L")
    return {
        "dep_repo_id": attempt(lambda: repo.kernel_dep.repo_id),
        "commit": attempt(lambda: repo.kernel_locks[repo.kernel_dep].commit),
        "keys": attempt(lambda: sorted(d.repo_id for d in repo.kernel_locks.keys())),
        "dep_hashable": attempt(lambda: hash(repo.kernel_dep) == hash(repo.kernel_dep)),
    }


@scenario()
def local_repositories_load():
    """LocalLayerRepository and LocalFuncRepository loading real (hand-made) kernels."""
    out = {}
    for name in ("Double", "NoBackward", "Compilable", "CompilableNoBackward"):
        layer = f"Lr{name}"
        PKG.register_kernel_mapping({layer: {"cpu": local("klayers", name)}})
        out[name] = {km: probe(layer, kmode=km, use_fallback=fb)
                     for km in KERNELIZE_MODES for fb in (True, False)}
    # the variant folder itself and the build folder are accepted as repo_path
    for case, path in (("build", ROOT / "klayers" / "build"),
                       ("variant", ROOT / "klayers" / "build" / "torch-universal")):
        PKG.register_kernel_mapping({f"Lp{case}": {"cpu": PKG.LocalLayerRepository(
            path, layer_name="Double")}})
        out[case] = probe(f"Lp{case}", use_fallback=False)
    return out


@scenario()
def locked_deepcopy():
    """DELIBERATE DIFFERENCE: an inheriting use_kernel_mapping with a locked repository in the
    mapping. The reference fails to deep-copy KernelLocks; kernelhub copies it."""
    locked = PKG.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock", layer_name="L")
    PKG.register_kernel_mapping({"LdL": {"cpu": locked}})
    inner = stub("ld_inner", factor=2.0)

    def enter():
        with PKG.use_kernel_mapping({"LdInner": {"cpu": inner}}):
            return probe("LdInner", use_fallback=False)

    def enter_no_inherit():
        with PKG.use_kernel_mapping({"LdInner": {"cpu": inner}}, inherit_mapping=False):
            return probe("LdInner", use_fallback=False)

    return {"inherit": attempt(enter), "no_inherit": attempt(enter_no_inherit),
            "after": probe("LdInner", use_fallback=False),
            "deepcopy": attempt(lambda: str(copy.deepcopy(locked)) == str(locked)),
            "deepcopy_eq": attempt(lambda: copy.deepcopy(locked) == locked)}


@scenario()
def lock_from_caller_package():
    """DELIBERATE DIFFERENCE: LockedLayerRepository without `lockfile`, called from an installed
    package whose metadata ships kernels.lock. The reference looks in its own distribution."""
    site = ROOT / "site"
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    mod = importlib.import_module("khlockuser")
    return {"layer": attempt(lambda: str(mod.make_layer(PKG))),
            "func": attempt(lambda: str(mod.make_func(PKG)))}


def make_lock_user_package(root: Path):
    site = root / "site"
    write(site / "khlockuser" / "__init__.py",
          "def make_layer(pkg):\n"
          "    return pkg.LockedLayerRepository('org/kern', layer_name='L')\n\n\n"
          "def make_func(pkg):\n"
          "    return pkg.LockedFuncRepository('org/kern', func_name='f')\n")
    dist = site / "khlockuser-0.1.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: khlockuser\nVersion: 0.1\n")
    write(dist / "top_level.txt", "khlockuser\n")
    write(dist / "RECORD", "khlockuser/__init__.py,,\n")
    write(dist / "kernels.lock", (root / "good.lock").read_text())


@scenario()
def get_kernel_dep_outside_loading():
    return [attempt(PKG.get_kernel_dep, "org/dep"), attempt(PKG.get_kernel_dep, "")]


# ------------------------------------------------------------------------------------------
# kernel-depends and get_kernel_dep (group "deps": LOCAL_KERNELS set by the test)

DEP_KERNEL_INIT = """
import importlib, os, sys

_pkg = importlib.import_module(%(pkg)s)


def _try(repo_id):
    try:
        module = _pkg.get_kernel_dep(repo_id)
        return ["ok", module.__name__, getattr(module, "VALUE", None),
                sys.modules.get(module.__name__) is module]
    except Exception as exc:
        return ["error", type(exc).__name__, str(exc)]


AT_IMPORT = {name: _try(name) for name in %(names)r}
VALUE = %(value)r
from . import layers


def later():
    return _try(%(first)r)
"""

SCALED_LAYERS = """
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        return x * 6
"""


def dep_kernel(root, name, depends, value, layers="", pkg='os.environ["KH_LAYER_DIFF_PKG"]'):
    """A local kernel whose import records what get_kernel_dep gives for its dependencies,
    a transitive one and an unknown one (AT_IMPORT), and whose `later()` asks again."""
    variant = root / name / "build" / "torch-universal"
    kid = f"_{name}_layer_diff"
    write(variant / "metadata.json", json.dumps({
        "name": name, "id": kid, "version": 1, "license": "apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"},
        "kernel-depends": [{"repo-id": d, "version": 1} for d in depends]}))
    names = list(depends) + ["org/kdep2", "org/none"]
    write(variant / "__init__.py", DEP_KERNEL_INIT % {
        "names": names, "value": value, "pkg": pkg, "first": depends[0] if depends else "org/none"})
    write(variant / "layers.py", layers or "")


def make_hub_dep_kernels(root: Path):
    """khtrusted/hkuser depends on khtrusted/hkdep (version 1); published by the hub test."""
    dep_kernel(root, "hkdep", [], "hdep")
    dep_kernel(root, "hkuser", ["khtrusted/hkdep"], "huser", layers=SCALED_LAYERS)


def make_dep_kernels(root: Path):
    def kernel(*args, **kwargs):
        dep_kernel(root, *args, **kwargs)

    kernel("kdep2", [], "dep2")
    kernel("kdep", ["org/kdep2"], "dep")
    kernel("kuser", ["org/kdep"], "user", layers="""
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        return x * 6
""")
    # a kernel written for the reference: it calls `kernels.get_kernel_dep` by name
    kernel("kuref", ["org/kdep"], "uref", pkg="'kernels'", layers="""
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        return x * 6
""")
    kernel("kcyc1", ["org/kcyc2"], "c1")
    kernel("kcyc2", ["org/kcyc1"], "c2")
    kernel("kmissing", ["org/kabsent"], "m")


@scenario("deps")
def kernel_depends():
    import os

    os.environ["KH_LAYER_DIFF_PKG"] = NAME
    out = {"outside": attempt(PKG.get_kernel_dep, "org/kdep")}
    PKG.register_kernel_mapping({"DpL": {"cpu": local("kuser", "Scaled")}})
    out["kernelize"] = probe("DpL", use_fallback=False)
    user = sys.modules.get("_kuser_layer_diff")
    out["at_import"] = getattr(user, "AT_IMPORT", None)
    out["later"] = attempt(lambda: user.later())
    dep = sys.modules.get("_kdep_layer_diff")
    out["dep_at_import"] = getattr(dep, "AT_IMPORT", None)
    out["dep2_at_import"] = getattr(sys.modules.get("_kdep2_layer_diff"), "AT_IMPORT", None)
    out["direct"] = attempt(lambda: PKG.get_local_kernel(ROOT / "kuser").VALUE)
    for name in ("kcyc1", "kmissing"):
        PKG.register_kernel_mapping({f"Dp{name}": {"cpu": local(name, "Nothing")}})
        out[name] = probe(f"Dp{name}", use_fallback="ALL")
    return out


@scenario("deps")
def hub_repositories_offline():
    """Hub repositories with HF_HUB_OFFLINE=1: LOCAL_KERNELS serves a `revision=` repository;
    `version=` still resolves against the (empty) cache; a locked one needs the cache."""
    P = PKG
    out = {}
    repos = {
        "layer_rev_local": P.LayerRepository("org/klayers", layer_name="Double", revision="main"),
        "layer_version_local": P.LayerRepository("org/klayers", layer_name="Double", version=1),
        "layer_rev_absent": P.LayerRepository("org/kabsent", layer_name="Double", revision="main"),
        "func_rev_local": P.FuncRepository("org/klayers", func_name="triple", revision="main"),
        "locked": P.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock",
                                          layer_name="Double"),
    }
    for name, repo in repos.items():
        out[name + " str"] = attempt(str, repo)
        layer = f"Ho_{name}"
        P.register_kernel_mapping({layer: {"cpu": repo}})
        out[name] = [probe(layer, use_fallback=fb) for fb in (False, "ALL")]
    return out


@scenario("deps", interop=True)
def kernel_depends_reference_import():
    """A kernel that imports the reference's `get_kernel_dep` (kernels call it by name),
    loaded by the package under test."""
    PKG.register_kernel_mapping({"DpRef": {"cpu": local("kuref", "Scaled")}})
    out = {"kernelize": probe("DpRef", use_fallback=False)}
    out["at_import"] = getattr(sys.modules.get("_kuref_layer_diff"), "AT_IMPORT", None)
    return out


# ------------------------------------------------------------------------------------------
# Hub repositories against `kernelhub serve` (group "hub": HF_ENDPOINT set by the test, which
# published ROOT/klayers as khtrusted/klayers (branches v1, v2; the org is trusted) and as
# khuntrusted/klayers (v1), and wrote ROOT/hub.lock pinning khtrusted/klayers v1)


@scenario("hub")
def hub_layer_repositories():
    P = PKG
    trusted, untrusted = "khtrusted/klayers", "khuntrusted/klayers"
    commit = json.loads((ROOT / "hub.lock").read_text())[0]["lock"]["commit"]
    repos = {
        "v1": lambda: P.LayerRepository(trusted, layer_name="Double", version=1),
        "v2": lambda: P.LayerRepository(trusted, layer_name="Compilable", version=2),
        "v3": lambda: P.LayerRepository(trusted, layer_name="Double", version=3),
        "branch": lambda: P.LayerRepository(trusted, layer_name="Double", revision="v1"),
        "commit": lambda: P.LayerRepository(trusted, layer_name="Double", revision=commit),
        "missing_layer": lambda: P.LayerRepository(trusted, layer_name="Nope", version=2),
        "untrusted": lambda: P.LayerRepository(untrusted, layer_name="Double", version=1),
        "untrusted_listed": lambda: P.LayerRepository(untrusted, layer_name="Double", version=1,
                                                      trust_remote_code=[untrusted]),
        "untrusted_true": lambda: P.LayerRepository(untrusted, layer_name="Double", revision="v1",
                                                    trust_remote_code=True),
        "missing_repo": lambda: P.LayerRepository("khtrusted/absent", layer_name="Double",
                                                  revision="main"),
        "missing_revision": lambda: P.LayerRepository(trusted, layer_name="Double",
                                                      revision="no-such-branch"),
        "func": lambda: P.FuncRepository(trusted, func_name="triple", version=1),
        "locked": lambda: P.LockedLayerRepository(trusted, lockfile=ROOT / "hub.lock",
                                                  layer_name="Double"),
        "locked_func": lambda: P.LockedFuncRepository(trusted, lockfile=ROOT / "hub.lock",
                                                      func_name="triple"),
    }
    # kernel-depends from the Hub; a lock must pin every node of the tree
    import os

    os.environ["KH_LAYER_DIFF_PKG"] = NAME
    user = "khtrusted/hkuser"
    repos.update({
        "dep_tree": lambda: P.LayerRepository(user, layer_name="Scaled", version=1),
        "dep_locked_root_only": lambda: P.LockedLayerRepository(
            user, lockfile=ROOT / "hub-root-only.lock", layer_name="Scaled"),
        "dep_locked_tree": lambda: P.LockedLayerRepository(
            user, lockfile=ROOT / "hub-tree.lock", layer_name="Scaled"),
    })
    out = {}
    for name, make in repos.items():
        repo = make()
        out[name + " str"] = attempt(str, repo)
        layer = f"Hb_{name}"
        P.register_kernel_mapping({layer: {"cpu": repo}})
        out[name] = [probe(layer, kmode=km, use_fallback=fb)
                     for km, fb in (("INFERENCE", False), ("INFERENCE", "ALL"),
                                    ("INFERENCE|TORCH_COMPILE", False))]
    out["hkuser_at_import"] = getattr(sys.modules.get("_hkuser_layer_diff"), "AT_IMPORT", None)
    return out


# ------------------------------------------------------------------------------------------
# Separate processes


@scenario("disable")
def disabled_mapping():
    """DISABLE_KERNEL_MAPPING=1: originals everywhere, no lookup, no log, no error."""
    a = stub("dis_a", factor=2.0)
    PKG.register_kernel_mapping({"DisL": {"cpu": a}})
    out = {fb: [probe("DisL", use_fallback=fb), probe("DisNone", use_fallback=fb),
                probe("DisL", kmode="TRAINING|TORCH_COMPILE", device="cuda", use_fallback=fb)]
           for fb in (True, False, "NONE")}
    out["loads"] = list(LOADS)
    return out


@scenario("rootlog")
def root_logger_handler():
    """The first kernelize that reaches repository selection calls logging.basicConfig
    (through the module-level logging.info), adding a stderr handler to the root logger."""
    root = logging.getLogger()
    before = [type(h).__name__ for h in root.handlers]
    PKG.register_kernel_mapping({"RlNone": {"cpu": {}}})
    probe("RlNone")  # falls back early: no logging.info call
    early = [type(h).__name__ for h in root.handlers]
    PKG.register_kernel_mapping({"RlL": {"cpu": stub("rl_a", factor=2.0)}})
    probe("RlL")
    after = [type(h).__name__ for h in root.handlers]
    fmt = [h.formatter._fmt if h.formatter else None for h in root.handlers]
    return {"before": before, "early": early, "after": after, "format": fmt,
            "level": root.level}


# ------------------------------------------------------------------------------------------
# Runner


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        name = record.name
        if name == "root" or name == NAME or name.startswith(NAME + "."):
            self.records.append([norm(name), record.levelname, record.getMessage()])
        elif name == "kernels" or name.startswith("kernels."):
            # the reference logging while the package under test runs: only expected where
            # the scenario itself calls the reference
            prefix = "PKG" if CURRENT[0] in INTEROP else "REFERENCE"
            self.records.append([prefix + name[len("kernels"):], record.levelname,
                                 record.getMessage()])


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_one(fn, capture):
    capture.records = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if fn.__name__ not in SHARED_DEFAULT:
                # an empty mapping set in this scenario's own context only
                PKG.register_kernel_mapping({}, inherit_mapping=False)
                if fn.__name__ in INTEROP and NAME != "kernels":
                    importlib.import_module("kernels").register_kernel_mapping(
                        {}, inherit_mapping=False)
            result = jsonable(fn())
        except Exception as exc:  # noqa: BLE001
            result = {"scenario crashed": error(exc), "traceback": traceback.format_exc()}
        finally:
            repos = sys.modules.get(f"{NAME}.layer.repos")
            if repos is not None and ORIGINAL_CAPABILITY:
                repos._find_capability = ORIGINAL_CAPABILITY[0]
    return {"result": result, "logs": list(capture.records),
            "warnings": [[w.category.__name__, str(w.message)] for w in caught]}


def main():
    global PKG, NAME, ROOT, torch, nn
    NAME, group, ROOT = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    import torch as _torch

    torch, nn = _torch, _torch.nn
    capture = Capture()
    if group != "rootlog":
        logging.getLogger().addHandler(capture)
        logging.getLogger().setLevel(logging.DEBUG)
    make_kernels(ROOT)
    _write_locks(ROOT)
    make_lock_user_package(ROOT)
    make_dep_kernels(ROOT)
    PKG = importlib.import_module(NAME)
    repos = attempt(layer_mod, ".repos")
    if repos[0] == "ok":
        ORIGINAL_CAPABILITY.append(repos[1]._find_capability)
    results = {}
    for name, (g, fn) in SCENARIOS.items():
        if g != group:
            continue
        CURRENT[0] = name
        results[name] = contextvars.Context().run(run_one, fn, capture)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
