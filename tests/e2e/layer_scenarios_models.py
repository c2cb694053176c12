# SPDX-License-Identifier: Apache-2.0
"""Layer scenarios (see layer_scenarios.py): Small models with decorated classes and functions,
interop with the reference's own decorations."""
from __future__ import annotations

import functools
import inspect
from pathlib import Path

from layer_scenarios_common import (
    KERNELIZE_MODES, attempt, describe, fallback_value, label_forward, local, mode, probe,
    scenario, stub,
)

# The package under test and its context: bound by layer_scenarios.main() (bind_package)
# before any scenario runs.
PKG = None
NAME = ""
ROOT = Path()
torch = None
nn = None


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
