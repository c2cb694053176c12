# SPDX-License-Identifier: Apache-2.0
"""Layer scenarios (see layer_scenarios.py): kernelize's mode selection and has_backward /
can_torch_compile matrix, CUDA/ROCm capability ranges on simulated devices, the failure matrix,
kernel-layer validation."""
from __future__ import annotations

import sys
from pathlib import Path

from layer_scenarios_common import (
    FALLBACKS, KERNELIZE_MODES, LOADS, MAPPING_KEYS, StubRepo, attempt, describe, kernel_class,
    layer_class, layer_mod, local, mode, probe, scenario, stub,
)

# The package under test and its context: bound by layer_scenarios.main() (bind_package)
# before any scenario runs.
PKG = None
NAME = ""
ROOT = Path()
torch = None
nn = None


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
