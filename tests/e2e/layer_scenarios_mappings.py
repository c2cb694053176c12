# SPDX-License-Identifier: Apache-2.0
"""Layer scenarios (see layer_scenarios.py): Kernel mappings: registration, contexts, threads;
DISABLE_KERNEL_MAPPING and the root logger (separate processes)."""
from __future__ import annotations

import logging
import threading
from pathlib import Path

from layer_scenarios_common import (
    KERNELIZE_MODES, LOADS, attempt, probe, scenario, stub,
)

# The package under test and its context: bound by layer_scenarios.main() (bind_package)
# before any scenario runs.
PKG = None
NAME = ""
ROOT = Path()
torch = None
nn = None


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
