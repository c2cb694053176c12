# SPDX-License-Identifier: Apache-2.0
"""What a benchmark run prints and writes: the reference's JSON payload, its box table, and
the speedup lines with their 95% confidence intervals."""
import math

from ._benchmark_timing import Timing



def payload(timings: dict[str, Timing], info: dict, kernel_sha: str, script_sha: str) -> dict:
    """The reference's JSON (BenchmarkResult.to_payload): results sorted by workload, with
    each workload's verify_<w> mean as `timingResults.ref_mean_ms` where there is one."""
    results = []
    for name in sorted(timings):
        t = timings[name]
        entry = {"workload": name, "timingResults": {
            "mean_ms": t.mean_ms, "std_ms": t.std_ms, "min_ms": t.min_ms, "max_ms": t.max_ms,
            "q1_ms": t.q1_ms, "q3_ms": t.q3_ms, "iqr_ms": t.iqr_ms, "outliers": t.outliers,
            "iterations": t.iterations}}
        if t.ref_mean_ms is not None:
            # Beyond the reference's shape: the hub's chart draws the reference time and the
            # speed-up from it, as the local chart does.
            entry["timingResults"]["ref_mean_ms"] = t.ref_mean_ms
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
