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
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from kernels import backends as B
from kernels import variants as V

from conftest import run

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


def test_generated_systems_resolve_like_the_reference(testtool, monkeypatch):
    _assert_same(_generated_cases(4000), testtool, monkeypatch)


def test_documented_systems_resolve_like_the_reference(testtool, monkeypatch):
    cases = _targeted_cases()
    assert len(cases) > 500
    _assert_same(cases, testtool, monkeypatch)


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


def test_names_parse_and_format_like_the_reference(testtool):
    names = _generated_names(3000)
    ours = _ours(testtool, "variants-parse", names)
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


def test_documented_names_round_trip(testtool):
    ours = _ours(testtool, "variants-parse", DOCUMENTED_NAMES)
    assert [our.get("name") for our in ours] == DOCUMENTED_NAMES
    assert [V.parse_variant(name).variant_str for name in DOCUMENTED_NAMES] == DOCUMENTED_NAMES


# --- kernel-builder list-variants ---------------------------------------------------------------

CORPUS = Path(__file__).resolve().parents[1] / "data" / "build-toml"


def _kernel_dir(tmp_path, corpus_name):
    directory = tmp_path / corpus_name.removesuffix(".toml")
    directory.mkdir()
    shutil.copy(CORPUS / corpus_name, directory / "build.toml")
    return directory


def _list_variants(kernel_builder, directory, *flags, env=None):
    return run([kernel_builder, "list-variants", directory, *flags], env=env)


@pytest.mark.parametrize("corpus_name", ["relu.toml", "relu-torch-stable-abi.toml", "relu-triton.toml"])
def test_locally_buildable_variants_load_with_the_reference(kernel_builder, tmp_path, corpus_name):
    """Every variant list-variants says this machine builds must be one the reference loader
    accepts here, for the backend it was built for (torch from the same venv)."""
    directory = _kernel_dir(tmp_path, corpus_name)
    result = _list_variants(kernel_builder, directory, "--json",
                            env={"KERNELHUB_PYTHON": sys.executable})
    listing = json.loads(result.stdout)
    buildable = [v for v in listing["variants"] if v["buildable"]]
    assert listing["python"] and buildable, listing
    detected = B._backend()
    checked = 0
    for variant in buildable:
        if variant["backend"] not in ("cpu", detected.name):
            continue
        _, trace = V.resolve_variants([V.parse_variant(variant["name"])], backend=variant["backend"])
        assert isinstance(trace[0], V.VariantAccepted), (variant, trace)
        checked += 1
    assert checked and result.returncode == 0


def _fake_machine(tmp_path, probe, nvcc_release=None):
    """A Python that prints a canned probe, and PATH with only a fake nvcc (if any)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    python = bin_dir / "fake-python"
    python.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(probe)}\nEOF\n")
    python.chmod(0o755)
    if nvcc_release:
        nvcc = bin_dir / "nvcc"
        nvcc.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {nvcc_release}, V{nvcc_release}.1'\n")
        nvcc.chmod(0o755)
    return {"KERNELHUB_PYTHON": str(python), "PATH": f"{bin_dir}:/usr/bin:/bin",
            "CUDA_HOME": "", "CUDA_PATH": ""}


CUDA_PROBE = {
    "executable": "/fake/python", "machine": "x86_64", "system": "Linux", "mac_ver": "",
    "free_threaded": False,
    "torch": {"version": "2.12.1+cu126", "cxx11": True, "cuda": "12.6", "hip": None, "xpu": None,
              "tpu": False, "neuron": False, "mps": False, "privateuse1": None, "cann": None},
}


def test_local_listing_explains_what_is_missing(kernel_builder, tmp_path):
    directory = _kernel_dir(tmp_path, "relu.toml")
    env = _fake_machine(tmp_path, CUDA_PROBE, nvcc_release="12.8")
    result = _list_variants(kernel_builder, directory, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        # cu126: the CUDA torch was built with, as build names it, not nvcc's 12.8 (issue 13
        # item 8).
        "torch212-cxx11-cpu-x86_64-linux", "torch212-cxx11-cu126-x86_64-linux",
    ]
    assert result.stderr.splitlines() == [
        "note: metal: not buildable here: Metal builds need macOS, this is linux",
        "note: rocm: not buildable here: torch 2.12 was built without ROCm",
        "note: xpu: not buildable here: torch 2.12 was built without XPU",
    ]
    listing = json.loads(_list_variants(kernel_builder, directory, "--json", env=env).stdout)
    assert listing["system"] == "x86_64-linux" and listing["torch"] == "2.12"
    assert listing["toolchains"] == {"nvcc": "12.8", "hipcc": False, "icpx": None}
    assert [v["backend"] for v in listing["variants"]] == ["cpu", "cuda", "metal", "rocm", "xpu"]


def test_local_listing_refuses_cuda_when_majors_differ_as_build_does(kernel_builder, tmp_path):
    directory = _kernel_dir(tmp_path, "relu.toml")
    env = _fake_machine(tmp_path, CUDA_PROBE, nvcc_release="13.0")
    result = _list_variants(kernel_builder, directory, env=env)
    assert "torch212-cxx11-cu" not in result.stdout
    assert "note: cuda: not buildable here: nvcc is CUDA 13.0 but torch was built with CUDA " \
           "12.6" in result.stderr


def test_local_listing_without_torch_or_nvcc_fails(kernel_builder, tmp_path):
    directory = _kernel_dir(tmp_path, "relu-torch-bounds.toml")
    probe = {k: v for k, v in CUDA_PROBE.items() if k != "torch"}
    result = _list_variants(kernel_builder, directory, env=_fake_machine(tmp_path, probe))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "note: cuda: not buildable here: torch is not installed for /fake/python" in result.stderr


BUNDLE_VARIANTS = {  # the reference's nix-builder/build-variants.json
    "aarch64-darwin": ["torch212-cpu-aarch64-darwin", "torch212-metal-aarch64-darwin",
                       "torch213-cpu-aarch64-darwin", "torch213-metal-aarch64-darwin"],
    "aarch64-linux": [f"torch21{t}-cxx11-{b}-aarch64-linux"
                      for t in "23" for b in ("cpu", "cu126", "cu130", "cu132")],
    "x86_64-linux": [f"torch21{t}-cxx11-{b}-x86_64-linux" for t in "23"
                     for b in ("cpu", "cu126", "cu130", "cu132", "rocm71", "rocm72",
                               "xpu20253" if t == "2" else "xpu20260")],
}


def test_all_variants_of_a_full_kernel_include_the_bundle(kernel_builder, tmp_path):
    directory = _kernel_dir(tmp_path, "relu.toml")
    listing = json.loads(_list_variants(kernel_builder, directory, "--all", "--json").stdout)
    bundle = {
        system["system"]: sorted(v["name"] for v in system["variants"] if v["bundle"])
        for system in listing["systems"]
    }
    assert bundle == {system: sorted(names) for system, names in BUNDLE_VARIANTS.items()}
    non_bundle = [v["name"] for s in listing["systems"] for v in s["variants"] if not v["bundle"]]
    assert non_bundle == ["torch211-cxx11-cpu-x86_64-linux"]


@pytest.mark.parametrize("corpus_name, expected", [
    ("relu-tpu.toml", ["torch-tpu"]),
    ("relu-nki.toml", []),
    ("relu-triton.toml", ["torch-cuda", "torch-rocm", "torch-xpu"]),
    ("relu-metal-cpp.toml", ["torch212-metal-aarch64-darwin", "torch213-metal-aarch64-darwin"]),
    ("relu-torch-bounds.toml", [
        "torch212-cxx11-cu126-aarch64-linux", "torch212-cxx11-cu130-aarch64-linux",
        "torch212-cxx11-cu132-aarch64-linux", "torch212-cxx11-cu126-x86_64-linux",
        "torch212-cxx11-cu130-x86_64-linux", "torch212-cxx11-cu132-x86_64-linux",
        "torch212-cxx11-rocm71-x86_64-linux", "torch212-cxx11-rocm72-x86_64-linux"]),
    ("relu-torch-stable-abi.toml", [
        "torch-stable-abi211-cpu-aarch64-darwin", "torch-metal",
        "torch-stable-abi211-cpu-aarch64-linux", "torch-stable-abi211-cu126-aarch64-linux",
        "torch-stable-abi211-cu130-aarch64-linux", "torch-stable-abi211-cu132-aarch64-linux",
        "torch-stable-abi211-cpu-x86_64-linux", "torch-stable-abi211-cu126-x86_64-linux",
        "torch-stable-abi211-cu130-x86_64-linux", "torch-stable-abi211-cu132-x86_64-linux",
        "torch-stable-abi211-rocm71-x86_64-linux", "torch-stable-abi211-rocm72-x86_64-linux",
        "torch-stable-abi211-xpu20253-x86_64-linux", "torch-stable-abi211-xpu20260-x86_64-linux"]),
    ("relu-tvm-ffi.toml", [
        "tvm-ffi01-cpu-aarch64-darwin", "tvm-ffi01-cpu-aarch64-linux", "tvm-ffi01-cu126-aarch64-linux",
        "tvm-ffi01-cu130-aarch64-linux", "tvm-ffi01-cu132-aarch64-linux", "tvm-ffi01-cpu-x86_64-linux",
        "tvm-ffi01-cu126-x86_64-linux", "tvm-ffi01-cu130-x86_64-linux", "tvm-ffi01-cu132-x86_64-linux",
        "tvm-ffi01-xpu20253-x86_64-linux"]),
])
def test_all_variants_of_corpus_kernels(kernel_builder, tmp_path, corpus_name, expected):
    result = _list_variants(kernel_builder, _kernel_dir(tmp_path, corpus_name), "--all")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    # Every name we list is one the reference loader can parse, back to the same text.
    assert [V.parse_variant(name).variant_str for name in expected] == expected


def test_arch_flag_lists_dev_shell_names(kernel_builder, tmp_path):
    directory = _kernel_dir(tmp_path, "relu-tpu.toml")
    result = _list_variants(kernel_builder, directory, "--all", "--arch")
    assert result.stdout.splitlines() == ["torch211-cxx11-tpu-x86_64-linux"]
    refused = _list_variants(kernel_builder, directory, "--arch")
    assert refused.returncode != 0 and "--all" in refused.stderr


def test_missing_build_toml_is_an_error(kernel_builder, tmp_path):
    result = _list_variants(kernel_builder, tmp_path, "--all")
    assert result.returncode == 1
    assert result.stderr.startswith("kernel-builder: error:")
    result = _list_variants(kernel_builder, tmp_path / "nope")
    assert result.returncode == 1 and "is not a directory" in result.stderr
