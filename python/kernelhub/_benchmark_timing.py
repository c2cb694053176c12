# SPDX-License-Identifier: Apache-2.0
"""Timing benchmark workloads: each `benchmark_<w>` of a Benchmark class after its warm-up,
checked against `verify_<w>` (itself timed as the reference computation), summarised with the
reference's statistics (mean, std, quartiles, IQR outliers)."""
import math
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

from ._benchmark_machine import _synchronize

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


def workloads_of(cls: type) -> list[str]:
    """The names of a class's `benchmark_<w>` methods, sorted."""
    return sorted(name[len("benchmark_"):] for name in dir(cls)
                  if name.startswith("benchmark_") and callable(getattr(cls, name)))


def wanted(cls: type, workload: str, only: list[str] | None) -> bool:
    """Whether `--workload` keeps it: none given keeps all; a name is `w` or `Class.w`."""
    return not only or workload in only or f"{cls.__name__}.{workload}" in only


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_class(torch, cls: type, kernel: Any, device: str, iterations: int,
              warmup: int, only: list[str] | None = None) -> dict[str, Timing]:
    all_workloads = workloads_of(cls)
    if not all_workloads:
        raise BenchmarkError(f"{cls.__name__} has no benchmark_* method")
    workloads = [w for w in all_workloads if wanted(cls, w, only)]
    if not workloads:
        return {}
    print(f"  Running {cls.__name__} on {device}", file=sys.stderr)

    def sync():
        _synchronize(torch, device)

    results = {}
    for index, workload in enumerate(workloads, 1):
        # Progress per workload: a large one on a slow device takes minutes, and a silent
        # run reads as a hung one (issue 22 §6).
        label = f"    [{index}/{len(workloads)}] {cls.__name__}.{workload}"
        _progress(f"{label}: setup, then {iterations} timed calls after {warmup} warm-up "
                  f"(and as many of verify_{workload} where there is one)")
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
        _progress(f"{label}: {timing.mean_ms:.4f} ms per call"
                  + (f" (verify_{workload}: {ref_mean:.4f} ms)" if ref_mean is not None else ""))
    return results
