# SPDX-License-Identifier: Apache-2.0
"""Parity of our variant names and loader rules with the reference `kernels` package.

Thousands of synthetic machines (CUDA 11.8-13.0, ROCm, XPU, CANN, Metal on several macOS
versions, CPU, no Torch, Torch 2.9-2.15, C++11 ABI on/off, tvm-ffi present/absent,
free-threaded Python, explicit `backend=`) meet random sets of variant names. The reference's
own resolution functions decide each case (`kernels.variants._resolve_variant_for_system`,
fed a synthetic backend and free-threading flag), and so does our code through
`kernelhub-testtool variants-resolve`; the ordered decisions, the rejection reasons, the
rendered trace and the skipped names must be identical.
"""
import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from kernels import backends as B
from kernels import variants as V

from conftest import REPO_ROOT

SEED = 20260521

CPUS = ["x86_64", "aarch64"]
OSES = ["linux", "darwin", "windows"]
TORCH_TAGS = ["29", "210", "211", "212", "213", "214", "215"]
BACKEND_TOKENS = [
    "cpu", "metal", "neuron", "tpu", "cu118", "cu124", "cu126", "cu128", "cu129", "cu130",
    "cu132", "rocm63", "rocm70", "rocm71", "rocm72", "xpu20253", "xpu20260", "cann81", "cann82",
]
NOARCH = [
    "torch-cpu", "torch-cuda", "torch-rocm", "torch-metal", "torch-xpu", "torch-npu",
    "torch-cann", "torch-neuron", "torch-tpu", "torch-universal",
]
# Names the reference skips (they fail to parse), plus odd ones it accepts.
ODD_NAMES = [
    "torch2-cpu-x86_64-linux", "tvm-ffi1-cpu-x86_64-linux", "torch212-cuda-x86_64-linux",
    "torch212-cxx11-cu126-x86_64", "torch210-cxx17-cpu-x86_64-linux", "torch-stable-abi-cpu",
    "torch-stable-abi2-cpu-x86_64-linux", "foo", "", "tvm-ff01-cpu-x86_64-linux", "torch",
    "torch-", "torch212-gpu-x86_64-linux", "torch212-cpu-x86_64-linux-gnu", "torch2010-cpu-x86_64-linux",
    "torch212-cu0126-x86_64-linux", "tvm-ffi0012-cpu-x86_64-linux", "torch-cuda-extra",
    "torch212-cpu--linux", "torch212-cxx11-cu1210-x86_64-linux",
]

# (backend kind, version as the system reports it)
SYSTEM_BACKENDS = (
    [("cuda", v) for v in ["11.8", "12.4", "12.6", "12.8", "12.9", "13.0", "13.2"]]
    + [("rocm", v) for v in ["6.3.42131", "7.0", "7.1.1", "7.2"]]
    + [("xpu", v) for v in ["2025.3", "2026.0"]]
    + [("cann", "8.1"), ("metal", None), ("cpu", None), ("neuron", None), ("tpu", None)]
)
MACOS_VERSIONS = [None, "14.5", "15.7.1", "26.0", "26.1", "27.0.1"]


def _ref_backend(kind, version):
    if kind == "cuda":
        return B.CUDA(version=Version(version))
    if kind == "rocm":
        return B.ROCm(version=Version(version))
    if kind == "xpu":
        return B.XPU(version=Version(version))
    if kind == "cann":
        return B.CANN(version=Version(version))
    return {"metal": B.Metal, "cpu": B.CPU, "neuron": B.Neuron, "tpu": B.TPU}[kind]()


def _arch_name(rng, cpu, os_name):
    framework = rng.choice(["torch", "torch", "torch", "stable", "tvm"])
    backend = rng.choice(BACKEND_TOKENS)
    if framework == "torch":
        tag = rng.choice(["", "-cxx11", "-cxx98"])
        return f"torch{rng.choice(TORCH_TAGS)}{tag}-{backend}-{cpu}-{os_name}"
    if framework == "stable":
        return f"torch-stable-abi{rng.choice(['29', '211', '213', '215'])}-{backend}-{cpu}-{os_name}"
    return f"tvm-ffi{rng.choice(['01', '02'])}-{backend}-{cpu}-{os_name}"


def _random_system(rng):
    kind, version = rng.choice(SYSTEM_BACKENDS)
    os_name = "darwin" if kind == "metal" and rng.random() < 0.8 else rng.choice(OSES)
    cpu = "aarch64" if os_name == "darwin" and rng.random() < 0.8 else rng.choice(CPUS)
    has_torch = rng.random() < 0.85
    torch = f"2.{rng.choice(TORCH_TAGS)[1:]}" if has_torch else None
    cxx11 = None
    if has_torch and os_name == "linux":
        cxx11 = rng.random() < 0.8
    requested = None
    roll = rng.random()
    if roll < 0.1:
        requested = "cpu"
    elif roll < 0.15:
        requested = kind
    elif roll < 0.18:
        requested = rng.choice(["cuda", "rocm", "metal", "npu", "gpu"])
    return {
        "cpu": cpu,
        "os": os_name,
        "macos": rng.choice(MACOS_VERSIONS) if os_name == "darwin" else None,
        "torch": torch,
        "cxx11": cxx11,
        "tvm_ffi": rng.choice([None, None, "0.1", "0.2"]),
        "backend": kind,
        "backend_version": version,
        "free_threaded": rng.random() < 0.05,
        "requested_backend": requested,
    }


def _random_names(rng, system):
    names = []
    for _ in range(rng.randint(0, 24)):
        roll = rng.random()
        if roll < 0.6:
            names.append(_arch_name(rng, system["cpu"], system["os"]))
        elif roll < 0.75:
            names.append(_arch_name(rng, rng.choice(CPUS), rng.choice(OSES)))
        elif roll < 0.93:
            names.append(rng.choice(NOARCH))
        else:
            names.append(rng.choice(ODD_NAMES))
    return names


def _generated_cases(count):
    rng = random.Random(SEED)
    cases = []
    for _ in range(count):
        system = _random_system(rng)
        cases.append({"system": system, "variants": _random_names(rng, system)})
    return cases


def _targeted_cases():
    """The systems the loader docs discuss, against every name built for them."""
    cases = []
    for kind, version in SYSTEM_BACKENDS:
        for torch in [None] + [f"2.{t[1:]}" for t in TORCH_TAGS]:
            for cxx11 in (True, False):
                for tvm_ffi in (None, "0.1"):
                    os_name = "darwin" if kind == "metal" else "linux"
                    cpu = "aarch64" if kind == "metal" else "x86_64"
                    names = [
                        f"torch{t}{tag}-{b}-{cpu}-{os_name}"
                        for t in ("210", "212", "215") for tag in ("", "-cxx11", "-cxx98")
                        for b in ("cpu", "cu126", "cu128", "cu130", "rocm71", "metal", "xpu20253")
                    ]
                    names += [f"torch-stable-abi{a}-cu128-{cpu}-{os_name}" for a in ("29", "212", "215")]
                    names += [f"tvm-ffi01-{b}-{cpu}-{os_name}" for b in ("cpu", "cu126", "metal")]
                    names += NOARCH
                    cases.append({
                        "system": {
                            "cpu": cpu, "os": os_name,
                            "macos": "26.0" if os_name == "darwin" else None,
                            "torch": torch, "cxx11": cxx11 if torch and os_name == "linux" else None,
                            "tvm_ffi": tvm_ffi, "backend": kind, "backend_version": version,
                            "free_threaded": False, "requested_backend": None,
                        },
                        "variants": names,
                    })
    for macos in MACOS_VERSIONS:
        cases.append({
            "system": {
                "cpu": "aarch64", "os": "darwin", "macos": macos, "torch": "2.12", "cxx11": None,
                "tvm_ffi": None, "backend": "metal", "backend_version": None,
                "free_threaded": False, "requested_backend": None,
            },
            "variants": ["torch212-metal-aarch64-darwin", "torch-stable-abi211-metal-aarch64-darwin",
                         "torch212-cpu-aarch64-darwin", "torch-metal", "torch-universal"],
        })
    return cases


class _WarningLog:
    def __init__(self):
        self.messages = []

    def warning(self, message, *args, **kwargs):
        self.messages.append(message)


def _reference(case, monkeypatch):
    system = case["system"]
    detected = _ref_backend(system["backend"], system["backend_version"])
    monkeypatch.setattr(B, "_backend", lambda: detected)
    monkeypatch.setattr(V, "_is_unsupported_free_threaded_build", lambda: system["free_threaded"])
    log = _WarningLog()
    monkeypatch.setattr(V, "logger", log)
    try:
        selected = B._select_backend(system["requested_backend"])
    except ValueError as error:
        return {"ok": False, "error": str(error)}

    variants, skipped = [], []
    for name in case["variants"]:
        try:
            variants.append(V.parse_variant(name))
        except ValueError:
            skipped.append(name)

    def version(key):
        return Version(system[key]) if system[key] is not None else None

    _, trace = V._resolve_variant_for_system(
        variants=variants,
        selected_backend=selected,
        cpu=system["cpu"],
        os=system["os"],
        torch_version=version("torch"),
        torch_cxx11_abi=system["cxx11"],
        tvm_ffi_version=version("tvm_ffi"),
        macos_version=version("macos"),
    )
    return {
        "ok": True,
        "trace": [
            {
                "variant": d.variant.variant_str,
                "accepted": isinstance(d, V.VariantAccepted),
                "reason": getattr(d, "reason", None),
            }
            for d in trace
        ],
        "text": V.variants_trace_str(trace),
        "warning": log.messages[0] if log.messages else None,
        "skipped": skipped,
    }


@pytest.fixture(scope="module")
def variants_tool():
    candidates = [os.environ.get("KERNELHUB_TESTTOOL")]
    if os.environ.get("KERNELHUB_BIN_DIR"):
        # A build tree's cli dir is <build>/src/kernelhub/cli; the tool is <build>/tests/tools.
        build = Path(os.environ["KERNELHUB_BIN_DIR"]).parents[2]
        candidates.append(build / "tests" / "tools" / "kernelhub-testtool")
    candidates.append(REPO_ROOT / "build" / "tests" / "tools" / "kernelhub-testtool")
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return Path(candidate)
    pytest.fail("kernelhub-testtool not found; set KERNELHUB_TESTTOOL or build it")


def _ours(tool, command, payload):
    result = subprocess.run(
        [str(tool), command], input=json.dumps(payload), capture_output=True, text=True,
        timeout=600, check=True,
    )
    return json.loads(result.stdout)


def _assert_same(cases, tool, monkeypatch):
    ours = _ours(tool, "variants-resolve", cases)
    assert len(ours) == len(cases)
    mismatches = []
    for case, our in zip(cases, ours):
        expected = _reference(case, monkeypatch)
        if our != expected:
            mismatches.append((case, expected, our))
    assert not mismatches, (
        f"{len(mismatches)} of {len(cases)} cases differ; first:\n"
        + json.dumps(mismatches[0], indent=1, ensure_ascii=False)
    )


def test_generated_systems_resolve_like_the_reference(variants_tool, monkeypatch):
    _assert_same(_generated_cases(4000), variants_tool, monkeypatch)


def test_documented_systems_resolve_like_the_reference(variants_tool, monkeypatch):
    cases = _targeted_cases()
    assert len(cases) > 500
    _assert_same(cases, variants_tool, monkeypatch)


REJECTION_KINDS = {
    "CPU (": "cpu", "OS (": "os", "Torch version (": "torch", "Torch CXX11 ABI (": "abi",
    "Torch stable ABI version (": "stable-abi", "tvm-ffi version (": "tvm-ffi",
    "CUDA version (": "cuda", "does not match selected backend": "arch-backend",
    "Metal kernels require": "metal", "and is not universal": "noarch-backend",
}


def test_generated_cases_cover_every_outcome(monkeypatch):
    """Guards the generator: the comparisons above are only as good as their coverage."""
    kinds, accepted, refused, warned = set(), 0, 0, 0
    for case in _generated_cases(4000) + _targeted_cases():
        result = _reference(case, monkeypatch)
        if not result["ok"]:
            refused += 1
            continue
        warned += result["warning"] is not None
        for decision in result["trace"]:
            if decision["accepted"]:
                accepted += 1
                continue
            kinds.update(kind for text, kind in REJECTION_KINDS.items() if text in decision["reason"])
    assert kinds == set(REJECTION_KINDS.values())
    assert accepted > 1000 and refused > 10 and warned > 10


DOCUMENTED_NAMES = [
    "torch-stable-abi211-cu126-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
    "torch-stable-abi29-metal-aarch64-darwin", "torch210-cu128-x86_64-windows",
    "torch210-cxx11-cu128-x86_64-linux", "torch211-cxx11-cpu-x86_64-linux",
    "torch212-cpu-aarch64-darwin", "torch212-cxx11-cu126-x86_64-linux",
    "torch212-cxx11-cu130-aarch64-linux", "torch212-cxx11-rocm72-x86_64-linux",
    "torch212-metal-aarch64-darwin", "torch213-cpu-aarch64-darwin",
    "torch213-cxx11-xpu20260-x86_64-linux", "torch26-cxx98-cu118-x86_64-linux",
    "torch27-cu124-x86_64-windows", "tvm-ffi01-cu126-x86_64-linux", "tvm-ffi01-cu128-x86_64-linux",
    "tvm-ffi01-xpu20253-x86_64-linux", *NOARCH,
]

NAME_TOKENS = [
    "torch", "torch212", "torch29", "torch2", "torch0010", "torchx1", "cxx11", "cxx98", "cxx17",
    "stable", "abi211", "abi2", "abi", "tvm", "ffi01", "ffi1", "ffi", "cu126", "cu1", "cuda",
    "cu0126", "rocm71", "xpu20253", "cann81", "cann", "metal", "cpu", "tpu", "neuron", "npu",
    "x86_64", "aarch64", "linux", "darwin", "", "universal", "7", "١٢",
]


def _generated_names(count):
    rng = random.Random(SEED + 1)
    names = list(DOCUMENTED_NAMES) + ODD_NAMES
    for _ in range(count):
        names.append("-".join(rng.choice(NAME_TOKENS) for _ in range(rng.randint(1, 6))))
    rng2 = random.Random(SEED + 2)
    for _ in range(count):
        names.append(_arch_name(rng2, rng2.choice(CPUS), rng2.choice(OSES)))
    return names


def _framework(variant):
    if isinstance(variant, V.NoarchVariant):
        return "torch-noarch"
    return {
        V.Torch: "torch", V.TorchStableAbi: "torch-stable-abi", V.TvmFfi: "tvm-ffi",
    }[type(variant.framework)]


def test_names_parse_and_format_like_the_reference(variants_tool):
    names = _generated_names(3000)
    ours = _ours(variants_tool, "variants-parse", names)
    mismatches = []
    for name, our in zip(names, ours):
        try:
            variant = V.parse_variant(name)
            expected = {"ok": True, "name": variant.variant_str, "framework": _framework(variant),
                        "arch": isinstance(variant, V.ArchVariant)}
        except ValueError:
            expected = {"ok": False}
        got = our if our["ok"] else {"ok": False}
        if got != expected:
            mismatches.append((name, expected, our))
    assert not mismatches, f"{len(mismatches)} names differ; first: {mismatches[:5]}"
    accepted = sum(1 for our in ours if our["ok"])
    assert 1000 < accepted < len(names) - 500


def test_documented_names_round_trip(variants_tool):
    ours = _ours(variants_tool, "variants-parse", DOCUMENTED_NAMES)
    assert [our.get("name") for our in ours] == DOCUMENTED_NAMES
    assert [V.parse_variant(name).variant_str for name in DOCUMENTED_NAMES] == DOCUMENTED_NAMES
