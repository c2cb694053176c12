# SPDX-License-Identifier: Apache-2.0
"""What every layer scenario module shares: the registry (`scenario`), the package under test
(bound by layer_scenarios.main()), result helpers (errors, labels of forwards), stub repositories,
probes and the hand-made local kernels. See layer_scenarios.py for how scenarios run."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

# name -> (group, function); groups run in separate processes (see the test).
SCENARIOS: dict = {}

# The package under test and its context: bound by layer_scenarios.main() (bind_package)
# before any scenario runs.
PKG = None
NAME = ""
ROOT = Path()
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
        if fn.__name__ in SCENARIOS:  # two areas must not share a name: one would vanish
            raise ValueError(f"scenario {fn.__name__!r} is registered twice")
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
