# SPDX-License-Identifier: Apache-2.0
"""The runner behind `kernelhub benchmark` (the reference's `kernels benchmark`): finds a
kernel's `benchmarks/benchmark*.py`, times every `benchmark_<w>` of their Benchmark subclasses
against the kernel, checks `verify_<w>`, prints a table, and writes the reference's JSON.

Beyond the reference: the device decides the variant (`backend=` of get_kernel), so a CUDA
build of torch on a machine without a GPU benchmarks the cpu variant on the cpu; scripts that
subclass `kernels.benchmark.Benchmark` run unchanged; `--upload` stores the result in the
kernel's repo on the hub as `benchmarks/<variant>/<device>.json`.

Run as `python -m kernelhub._benchmark_runner REPO_ID|PATH [options]`; the C++ `kernelhub
benchmark` starts it that way. Messages go to stderr, `--json` alone to stdout.
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import platform
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Where a benchmark class may come from: ours, or the reference's (checked by name along the
# MRO so that the reference package need not be imported to recognise its scripts).
_BASE_CLASSES = {("kernelhub.benchmark", "Benchmark"), ("kernels.benchmark", "Benchmark")}
_SCRIPT_MODULE = "benchmark_module"
_VERIFY_ATOL = 1e-2


class BenchmarkError(Exception):
    """A failure the user can act on: printed as `kernelhub: error: <message>`, exit 1."""


@dataclass
class Timing:
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    q1_ms: float
    q3_ms: float
    iqr_ms: float
    outliers: int
    iterations: int
    verified: bool | None = None
    ref_mean_ms: float | None = None


@dataclass
class Target:
    """What to benchmark: a Hub repo at a revision, or a local kernel folder."""

    repo_id: str
    revision: str
    local_path: Path | None


# ------------------------------------------------------------------------------------------
# Arguments and the revision


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelhub benchmark",
        description="Time a kernel's benchmarks/benchmark*.py workloads on this machine.")
    parser.add_argument("repo_id", help="a Hub repo id (org/name, org/name@v1) or a local "
                        "kernel folder (revision `local`)")
    parser.add_argument("--branch", help="the branch to benchmark")
    parser.add_argument("--version", type=int, help="the version to benchmark (branch v<N>)")
    parser.add_argument("--output", help="write the JSON result to this file")
    parser.add_argument("--json", action="store_true", help="print the JSON result on stdout")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--visual", help="write charts to media/<VISUAL>_{light,dark}.svg")
    parser.add_argument("--rasterized", action="store_true",
                        help="with --visual, PNG copies of the charts as well")
    parser.add_argument("--upload", action="store_true",
                        help="store the JSON result in the kernel's repo on the hub as "
                        "benchmarks/<variant>/<device>.json")
    return parser


def resolve_target(repo_id: str, branch: str | None, version: int | None) -> Target:
    """The revision as the reference picks it: a local path is `local`; else --version
    (branch v<N>), --branch, or a `@v<N>` / `@<branch>` suffix of the repo id."""
    path = Path(repo_id)
    if not path.is_absolute():
        path = Path.cwd() / path
    if path.exists():
        if repo_id.count("/") == 1 and not repo_id.startswith(("./", "../")):
            print(f"warning: '{repo_id}' is a local folder but reads like a repo id; write "
                  f"'./{repo_id}' to say it is a folder", file=sys.stderr)
        return Target(repo_id, "local", path.resolve())
    if branch is None and version is None:
        if "@" not in repo_id:
            raise BenchmarkError(f"'{repo_id}': give a version (--version N or "
                                 f"{repo_id}@v<N>) or a branch (--branch B)")
        repo_id, suffix = repo_id.split("@", 1)
        if suffix.isdigit():
            raise BenchmarkError(f"version '{suffix}' must be written 'v{suffix}'")
        if suffix.startswith("v") and suffix[1:].isdigit():
            version = int(suffix[1:])
        else:
            branch = suffix
    revision = f"v{version}" if version is not None else branch
    return Target(repo_id, revision, None)


# ------------------------------------------------------------------------------------------
# The machine


def _pick_device(torch) -> tuple[str | None, str]:
    """(backend for get_kernel, torch device): the accelerator this process can use, not the
    one torch was built for. None lets the loader choose (a device it alone knows)."""
    if torch.cuda.is_available():
        return ("rocm" if getattr(torch.version, "hip", None) else "cuda"), "cuda"
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return "xpu", "xpu"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "metal", "mps"
    if hasattr(torch, "npu") and torch.npu.is_available():
        return None, "npu"
    return "cpu", "cpu"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine_info(torch, device: str) -> dict:
    """The reference's machineInfo: gpu, backend, pytorchVersion, os, cpu (gpuCores on Macs
    only, which we do not report)."""
    gpu, backend = "N/A", "CPU"
    if device == "cuda":
        gpu = torch.cuda.get_device_name(0)
        hip = getattr(torch.version, "hip", None)
        if hip:
            backend = f"ROCm {hip}"
        else:
            backend = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CUDA"
    elif device == "xpu":
        gpu, backend = torch.xpu.get_device_name(0), "XPU"
    elif device == "mps":
        gpu, backend = "Apple MPS", "MPS"
    elif device == "npu":
        backend = "NPU"
    return {
        "gpu": gpu,
        "backend": backend,
        "pytorchVersion": torch.__version__,
        "os": f"{platform.system()} {platform.release()}",
        "cpu": platform.processor() or platform.machine() or "Unknown",
    }


def device_slug(info: dict) -> str:
    """The file name of an uploaded result: the GPU's name, else `cpu-<model>`."""
    name = info["gpu"] if info["gpu"] != "N/A" else f"cpu-{_cpu_model()}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return slug or "unknown"


def _synchronize(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "xpu":
        torch.xpu.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


# ------------------------------------------------------------------------------------------
# Scripts and classes


def find_scripts(root: Path, shown: str) -> list[Path]:
    folder = root / "benchmarks"
    if not folder.is_dir():
        raise BenchmarkError(f"'{shown}' has no benchmarks/ folder")
    scripts = sorted(folder.glob("benchmark*.py"))
    if not scripts:
        raise BenchmarkError(f"'{shown}/benchmarks' holds no benchmark*.py script")
    return scripts


def _is_benchmark_class(obj) -> bool:
    if not isinstance(obj, type):
        return False
    bases = obj.__mro__[1:]
    return any((base.__module__, base.__name__) in _BASE_CLASSES for base in bases)


def load_classes(script: Path, cwd: Path) -> list[type]:
    """The Benchmark subclasses the script defines itself (imported ones are skipped); the
    script is executed with the kernel's folder as working directory, as the reference does."""
    spec = importlib.util.spec_from_file_location(_SCRIPT_MODULE, script)
    if spec is None or spec.loader is None:
        raise BenchmarkError(f"cannot load '{script}'")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_SCRIPT_MODULE] = module
    before = os.getcwd()
    os.chdir(cwd)
    try:
        spec.loader.exec_module(module)
    finally:
        os.chdir(before)
    return [obj for _name, obj in sorted(vars(module).items())
            if _is_benchmark_class(obj) and obj.__module__ == _SCRIPT_MODULE]


# ------------------------------------------------------------------------------------------
# Timing


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 1]."""
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(samples_ms: list[float]) -> Timing:
    count = len(samples_ms)
    mean = sum(samples_ms) / count
    std = math.sqrt(sum((s - mean) ** 2 for s in samples_ms) / count)
    ordered = sorted(samples_ms)
    q1, q3 = _quantile(ordered, 0.25), _quantile(ordered, 0.75)
    iqr = q3 - q1
    fence_low, fence_high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    outliers = sum(1 for s in samples_ms if s < fence_low or s > fence_high)
    r = lambda v: round(v, 4)  # noqa: E731  (the reference's precision)
    return Timing(mean_ms=r(mean), std_ms=r(std), min_ms=r(ordered[0]), max_ms=r(ordered[-1]),
                  q1_ms=r(q1), q3_ms=r(q3), iqr_ms=r(iqr), outliers=outliers, iterations=count)


def _time_calls(fn, count: int, sync) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        sync()
        samples.append((time.perf_counter() - start) * 1000.0)
    return samples


def run_class(torch, cls: type, kernel: Any, device: str, iterations: int,
              warmup: int) -> dict[str, Timing]:
    workloads = sorted(name[len("benchmark_"):] for name in dir(cls)
                       if name.startswith("benchmark_") and callable(getattr(cls, name)))
    if not workloads:
        raise BenchmarkError(f"{cls.__name__} has no benchmark_* method")
    print(f"  Running {cls.__name__} on {device}", file=sys.stderr)

    def sync():
        _synchronize(torch, device)

    results = {}
    for workload in workloads:
        # A fresh instance per workload, so no state leaks from one to the next.
        bench = cls()
        bench.kernel = kernel
        bench.device = device
        if bench.seed is not None:
            torch.manual_seed(bench.seed)
            random.seed(bench.seed)
        getattr(bench, f"setup_{workload}", bench.setup)()
        run = getattr(bench, f"benchmark_{workload}")
        verify = getattr(bench, f"verify_{workload}", None)

        verified, ref_mean = None, None
        if verify is not None:
            run()
            sync()
            for _ in range(warmup):
                verify()
                sync()
            # The reference computation is timed as often as the kernel, so the speedup
            # compares two means of the same number of samples.
            ref_samples = _time_calls(verify, iterations, sync)
            ref_mean = round(sum(ref_samples) / len(ref_samples), 4)
            expected = verify()
            sync()
            try:
                verified = bool(torch.allclose(bench.out, expected, atol=_VERIFY_ATOL))
            except (RuntimeError, TypeError) as exc:
                raise BenchmarkError(f"{cls.__name__}.{workload}: cannot compare out with "
                                     f"verify_{workload}'s result: {exc}") from exc
            if not verified:
                diff = (bench.out.float() - expected.float()).abs().max().item()
                raise BenchmarkError(f"{cls.__name__}.{workload}: out differs from "
                                     f"verify_{workload}'s result (max abs difference {diff:g}, "
                                     f"atol {_VERIFY_ATOL})")
        for _ in range(warmup):
            run()
            sync()
        timing = summarize(_time_calls(run, iterations, sync))
        timing.verified, timing.ref_mean_ms = verified, ref_mean
        results[workload] = timing
    return results


# ------------------------------------------------------------------------------------------
# Output


def payload(timings: dict[str, Timing], info: dict, kernel_sha: str, script_sha: str) -> dict:
    """The reference's JSON (BenchmarkResult.to_payload): results sorted by workload."""
    results = []
    for name in sorted(timings):
        t = timings[name]
        entry = {"workload": name, "timingResults": {
            "mean_ms": t.mean_ms, "std_ms": t.std_ms, "min_ms": t.min_ms, "max_ms": t.max_ms,
            "q1_ms": t.q1_ms, "q3_ms": t.q3_ms, "iqr_ms": t.iqr_ms, "outliers": t.outliers,
            "iterations": t.iterations}}
        if t.verified is not None:
            entry["verified"] = t.verified
        results.append(entry)
    out = {"results": results, "machineInfo": info, "kernelCommitSha": kernel_sha,
           "benchmarkScriptPath": "benchmarks"}
    if script_sha:
        out["benchmarkScriptSha"] = script_sha
    return out


def _box(rows: list[list[str]], headers: list[str], numeric: set[int]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]

    def line(cells):
        parts = []
        for i, cell in enumerate(cells):
            text = str(cell)
            parts.append(text.rjust(widths[i]) if i in numeric else text.ljust(widths[i]))
        return "│ " + " │ ".join(parts) + " │"

    def rule(left, mid, right):
        return left + mid.join("─" * (w + 2) for w in widths) + right

    lines = [rule("┌", "┬", "┐"), line(headers), rule("├", "┼", "┤")]
    lines += [line(r) for r in rows]
    lines.append(rule("└", "┴", "┘"))
    return "\n".join(lines)


def results_table(timings: dict[str, Timing]) -> str:
    """The reference's table: Benchmark, Workload, N, [Speedup,] Mean, Std, Min, Max, IQR,
    Outliers, [Ref,] Match (✓ verified, ✗ failed, · not checked)."""
    with_ref = any(t.ref_mean_ms is not None for t in timings.values())
    headers = ["Benchmark", "Workload", "N"]
    if with_ref:
        headers.append("Speedup")
    headers += ["Mean(ms)", "Std(ms)", "Min(ms)", "Max(ms)", "IQR(ms)", "Outliers"]
    if with_ref:
        headers.append("Ref(ms)")
    headers.append("Match")
    rows = []
    for name in sorted(timings):
        t = timings[name]
        cls, _, workload = name.rpartition(".")
        row = [cls, workload, str(t.iterations)]
        if with_ref:
            fast = t.ref_mean_ms is not None and t.mean_ms > 0
            row.append(f"{t.ref_mean_ms / t.mean_ms:.2f}x" if fast else "")
        row += [f"{v:.4f}" for v in (t.mean_ms, t.std_ms, t.min_ms, t.max_ms, t.iqr_ms)]
        row.append(str(t.outliers))
        if with_ref:
            row.append(f"{t.ref_mean_ms:.4f}" if t.ref_mean_ms is not None else "")
        row.append({True: "✓", False: "✗"}.get(t.verified, "·"))
        rows.append(row)
    numeric = {i for i, h in enumerate(headers) if h not in ("Benchmark", "Workload", "Match")}
    return _box(rows, headers, numeric)


def significance_lines(timings: dict[str, Timing]) -> list[str]:
    """Per workload with a reference time: the speedup and the kernel mean's 95% confidence
    interval; `significant` when the whole interval lies below the reference mean."""
    lines = []
    for name in sorted(timings):
        t = timings[name]
        if t.ref_mean_ms is None or t.mean_ms <= 0:
            continue
        half = 1.96 * t.std_ms / math.sqrt(t.iterations)
        low, high = t.mean_ms - half, t.mean_ms + half
        mark = " ✓ significant" if high < t.ref_mean_ms else ""
        ratio = t.ref_mean_ms / t.mean_ms
        speed = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
        lines.append(f"  {name.rpartition('.')[2]}: {speed} (95% CI: {low:.4f}-{high:.4f}ms "
                     f"vs ref {t.ref_mean_ms:.4f}ms){mark}")
    return lines


# ------------------------------------------------------------------------------------------
# Upload


def upload_result(target: Target, result: dict, variant: str, device: str) -> str:
    """Commits the result to the kernel's repo on the hub (HF_ENDPOINT, HF_TOKEN), on the
    branch that was benchmarked; returns the path in the repo."""
    try:
        from huggingface_hub import HfApi
    except ImportError as exc:
        raise BenchmarkError("--upload needs huggingface_hub: pip install huggingface_hub") \
            from exc
    path_in_repo = f"benchmarks/{variant}/{device}.json"
    body = (json.dumps(result, indent=2) + "\n").encode()
    HfApi().upload_file(path_or_fileobj=body, path_in_repo=path_in_repo,
                        repo_id=target.repo_id, repo_type="kernel", revision=target.revision,
                        commit_message=f"Benchmark results for {variant} on {device}")
    return path_in_repo


# ------------------------------------------------------------------------------------------
# The run


def _fetch_scripts(target: Target) -> Path:
    """The repo's benchmarks/ folder at the revision (only it: the variants are downloaded
    by get_kernel, for this machine alone)."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.utils import disable_progress_bars
    except ImportError as exc:
        raise BenchmarkError("benchmarking a Hub kernel needs huggingface_hub: "
                             "pip install huggingface_hub") from exc
    disable_progress_bars()
    return Path(snapshot_download(target.repo_id, repo_type="kernel", revision=target.revision,
                                  allow_patterns=["benchmarks/*"]))


def _variant_of(kernel) -> str:
    from . import get_loaded_kernels

    for loaded in get_loaded_kernels():
        if loaded.module is kernel and loaded.variant_path is not None:
            return Path(loaded.variant_path).name
    return Path(kernel.__file__).parent.name


def run(args: argparse.Namespace) -> int:
    if args.iterations < 1:
        raise BenchmarkError(f"--iterations must be at least 1, not {args.iterations}")
    if args.warmup < 0:
        raise BenchmarkError(f"--warmup must not be negative, not {args.warmup}")
    target = resolve_target(args.repo_id, args.branch, args.version)
    if args.upload and target.local_path is not None:
        raise BenchmarkError(f"--upload needs a Hub repo id, not the local folder "
                             f"'{args.repo_id}'")
    if args.upload and re.fullmatch(r"[0-9a-f]{40}", target.revision or ""):
        # A result is committed on top of what was measured; a commit id names no branch.
        raise BenchmarkError(f"--upload needs a branch or version, not the commit "
                             f"'{target.revision}'")
    if args.visual:
        # Before the minutes of timing, not after them.
        from ._benchmark_charts import require_matplotlib

        require_matplotlib()
    try:
        import torch
    except ImportError as exc:
        raise BenchmarkError("benchmarks need torch: pip install torch") from exc

    from . import get_kernel, get_local_kernel

    print(f"Downloading {target.repo_id}@{target.revision}...", file=sys.stderr)
    root = target.local_path if target.local_path is not None else _fetch_scripts(target)
    scripts = find_scripts(root, target.repo_id)
    if target.local_path is not None and not (target.local_path / "build").is_dir():
        raise BenchmarkError(f"'{args.repo_id}' has no build/ folder: build the kernel first "
                             f"(kernel-builder build {args.repo_id})")
    backend, device = _pick_device(torch)
    info = machine_info(torch, device)
    try:
        if target.local_path is not None:
            kernel = get_local_kernel(target.local_path, backend=backend)
        else:
            kernel = get_kernel(target.repo_id, revision=target.revision, backend=backend)
    except Exception as exc:  # the loader's own errors, shown as one line
        raise BenchmarkError(f"cannot load '{target.repo_id}@{target.revision}' for "
                             f"{backend or device}: {str(exc).strip()}") from exc
    kernel_sha = kernel.__name__.rpartition("_")[2]

    timings: dict[str, Timing] = {}
    for script in scripts:
        print(f"Running {script.name}...", file=sys.stderr)
        classes = load_classes(script, root)
        if not classes:
            raise BenchmarkError(f"'{script}' defines no Benchmark subclass")
        print(f"\n  GPU      {info['gpu']}\n  CPU      {info['cpu']}\n  OS       {info['os']}\n"
              f"  PyTorch  {info['pytorchVersion']}\n", file=sys.stderr)
        for cls in classes:
            for workload, timing in run_class(torch, cls, kernel, device, args.iterations,
                                              args.warmup).items():
                timings[f"{cls.__name__}.{workload}"] = timing

    print("\n" + results_table(timings), file=sys.stderr)
    lines = significance_lines(timings)
    if lines:
        print("\n" + "\n".join(lines), file=sys.stderr)
    digest = hashlib.sha256()
    for script in scripts:
        digest.update(script.read_bytes())
    script_sha = digest.hexdigest()
    print(f"\nKernel: {kernel_sha[:7]}  Benchmark: {script_sha[:7]}", file=sys.stderr)

    result = payload(timings, info, kernel_sha, script_sha)
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=2))
        print(f"Results saved to: {args.output}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, indent=2))
    if args.visual:
        from ._benchmark_charts import write_charts

        for path in write_charts(timings, args.visual, target.repo_id, info,
                                 rasterized=args.rasterized):
            print(f"Chart saved to: {path}", file=sys.stderr)
    if args.upload:
        where = upload_result(target, result, _variant_of(kernel), device_slug(info))
        print(f"Uploaded to {target.repo_id}@{target.revision}: {where}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except BenchmarkError as exc:
        print(f"kernelhub: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130  # as a shell reports SIGINT, without a traceback


if __name__ == "__main__":
    # Through the package's module, not this __main__ copy, so that BenchmarkError raised by
    # the chart module is the class caught here.
    from kernelhub._benchmark_runner import main as _package_main

    sys.exit(_package_main())
