#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build time of examples/relu (cpu): `kernel-builder build` against torch.utils.cpp_extension.

Run by hand, not in CI (each cold build compiles against torch's headers), from the
repository root after scripts/setup.sh:

    .venv/bin/python bench/build/bench_build.py

Measured, with ccache disabled (CCACHE_DISABLE=1) so a cold build really compiles, in rounds
(--repeat, default 3) that time both builds side by side, alternating which goes first:
  - cold `kernel-builder build` of a fresh copy of examples/relu restricted to its cpu
    backend, checks on: the source checks, CMake configure, the compile, the variant assembly
    and metadata, the load check and the ABI check;
  - cold torch.utils.cpp_extension.load of the same two sources (with our registration.h, the
    same TORCH_EXTENSION_NAME scheme and -O3, as the CMake project's Release build) into a
    fresh build folder;
  - the no-op rebuild: `kernel-builder build` again with nothing changed.
With --sandbox it measures only the build sandbox's cost instead: cold and no-op builds in the
sandbox (the default) and with --no-sandbox, side by side (sandbox_cost).
With --rows it times cold builds only, row by row (cold_rows), each against cpp_extension given
the same sources, defines, -O3, TORCH_CUDA_ARCH_LIST and MAX_JOBS, and with --before PATH a
second kernel-builder (main's, say) in the same rounds:
  - cpu: examples/relu, its cpu backend;
  - cuda: examples/relu, its cuda backend (archs 8.0 and 9.0+PTX);
  - many-arch: examples/rmsnorm, its cuda backend with the kernel's cuda-capabilities removed,
    so it compiles for the full default arch list of the nvcc (10 archs with CUDA 13).
One untimed build of each kind comes first: it fills the machine-wide caches a user's first
build fills once (the torch probe, the private libstdc++ archive) and warms the page cache for
both. It prints the median of each, the ratio of the medians, and the load average.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RELU = REPO / "examples" / "relu"


def committed(kernel: Path) -> Path:
    """The copy as a git commit: the kernel id comes from the commit, and an uncommitted kernel
    gets a new random id on every build, so it could never be a no-op."""
    git = ["git", "-C", str(kernel), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "bench"], check=True)
    return kernel


def backend_only_copy(destination: Path, source: Path, backend: str, kernel_table: str,
                      all_archs: bool = False) -> Path:
    """A copy of the example `source` with only `backend` and its [kernel.<kernel_table>];
    with all_archs, without that kernel's cuda-capabilities (the nvcc's full default list)."""
    kernel = destination / source.name
    shutil.copytree(source, kernel, ignore=shutil.ignore_patterns("build", "tests"))
    text = (kernel / "build.toml").read_text()
    text = re.sub(r"backends = \[[^\]]*\]", f'backends = ["{backend}"]', text)
    if all_archs:
        text = re.sub(r"(?m)^cuda-capabilities = \[[^\]]*\]\n", "", text)
    # Drop every [kernel.*] table that is not the one kept.
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        header = re.match(r"\[kernel\.([^\]]+)\]", line)
        if header:
            keep = header.group(1) == kernel_table
        elif line.startswith("["):
            keep = True
        if keep:
            kept.append(line)
    (kernel / "build.toml").write_text("".join(kept))
    return kernel


def cpu_only_copy(destination: Path) -> Path:
    """examples/relu with only its cpu backend: the comparison is of C++ builds."""
    return backend_only_copy(destination, RELU, "cpu", "relu_cpu")


# CPU seconds (user and system) of every process each cold build ran, beside its wall time: on
# a machine that other work keeps busy, wall time follows the CPU work, not the overlap.
CPU_SECONDS = {}


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, env=None, cwd=None):
    start = time.perf_counter()
    cpu = children_cpu()
    result = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True,
                            text=True)
    elapsed = time.perf_counter() - start
    CPU_SECONDS[elapsed] = children_cpu() - cpu
    if result.returncode != 0:
        sys.exit(f"{argv[0]} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return elapsed


CPP_EXTENSION = r"""
import sys, time
from pathlib import Path
import torch.utils.cpp_extension as ext
kernel, project, build_dir = map(Path, sys.argv[1:4])
start = time.perf_counter()
ext.load(
    name="_relu_bench",
    sources=[str(kernel / "torch-ext" / "torch_binding.cpp"),
             str(kernel / "relu_cpu" / "relu_cpu.cpp")],
    extra_include_paths=[str(project / "torch-ext"), str(kernel)],
    extra_cflags=["-O3"],
    build_directory=str(build_dir),
    is_python_module=False,
    verbose=False,
)
print(time.perf_counter() - start)
"""


def cpp_extension_build(python: Path, kernel: Path, project: Path, build_dir: Path, env):
    build_dir.mkdir(parents=True)
    start = time.perf_counter()
    cpu = children_cpu()
    result = subprocess.run([str(python), "-c", CPP_EXTENSION, str(kernel), str(project),
                             str(build_dir)], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    CPU_SECONDS[elapsed] = children_cpu() - cpu
    if result.returncode != 0:
        sys.exit(f"cpp_extension failed:\n{result.stdout}\n{result.stderr}")
    return elapsed


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def sandbox_cost(args, python: Path, env: dict):
    """The build sandbox's cost (issue 24 §2): cold and no-op `kernel-builder build` of the same
    kernel in the sandbox (the default) and with --no-sandbox, side by side in rounds that
    alternate which goes first; each cold build a fresh copy (ccache off), each no-op a rebuild
    of the copy just built."""
    times = {"sandbox": [], "no-sandbox": []}
    noops = {"sandbox": [], "no-sandbox": []}
    print(f"load average at the start: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kernelhub-bench-sandbox-") as tmp:
        def cold(name, mode):
            kernel = committed(cpu_only_copy(Path(tmp) / name))
            extra = ["--no-sandbox"] if mode == "no-sandbox" else []
            build = [args.kernel_builder, "build", kernel, "--python", python, *extra]
            return build, timed(build, env=env)

        cold("warmup", "sandbox")
        for round_ in range(args.repeat):
            order = ("sandbox", "no-sandbox") if round_ % 2 == 0 else ("no-sandbox", "sandbox")
            for mode in order:
                build, elapsed = cold(f"{mode}{round_}", mode)
                times[mode].append(elapsed)
                noops[mode].extend(timed(build, env=env) for _ in range(args.noop_runs))
            print(f"round {round_ + 1}: cold in the sandbox {times['sandbox'][-1]:.2f} s, "
                  f"without {times['no-sandbox'][-1]:.2f} s, ratio "
                  f"{times['sandbox'][-1] / times['no-sandbox'][-1]:.2f} "
                  f"(load {load_average()})", flush=True)
    median = statistics.median
    runs = lambda values: ", ".join(f"{t:.3f}" for t in values)  # noqa: E731
    for kind, table in (("cold", times), ("no-op", noops)):
        inside, outside = median(table["sandbox"]), median(table["no-sandbox"])
        print(f"{kind:5} build in the sandbox: {inside:8.3f} s (median; runs: "
              f"{runs(table['sandbox'])})")
        print(f"{kind:5} build --no-sandbox:     {outside:8.3f} s (median; runs: "
              f"{runs(table['no-sandbox'])})")
        print(f"{kind:5} ratio sandbox / --no-sandbox: {inside / outside:.2f}")
    print(f"load average at the end: {load_average()}")


# The rows of --rows: the example, its backend and kernel table, whether the kernel's
# cuda-capabilities are dropped (the full default list), and the sources cpp_extension compiles.
ROWS = {
    "cpu": dict(source=RELU, backend="cpu", table="relu_cpu", all_archs=False,
                sources=["torch-ext/torch_binding.cpp", "relu_cpu/relu_cpu.cpp"]),
    "cuda": dict(source=RELU, backend="cuda", table="relu_cuda", all_archs=False,
                 sources=["torch-ext/torch_binding.cpp", "relu_cuda/relu.cu"]),
    "many-arch": dict(source=REPO / "examples" / "rmsnorm", backend="cuda", table="rmsnorm_cuda",
                      all_archs=True,
                      sources=["torch-ext/torch_binding.cpp", "rmsnorm_cuda/rmsnorm_cuda.cpp",
                               "rmsnorm_cuda/rmsnorm_kernels.cu", "rmsnorm_cpu/rmsnorm_cpu.cpp"]),
}

CPP_EXTENSION_ROW = r"""
import json, sys
import torch.utils.cpp_extension as ext
spec = json.loads(sys.argv[1])
ext.load(name=spec["name"], sources=spec["sources"], extra_include_paths=spec["includes"],
         extra_cflags=spec["cflags"], extra_cuda_cflags=spec["cuda_cflags"],
         build_directory=spec["build_dir"], is_python_module=False, verbose=False)
"""


def run_measured(argv, env):
    """Wall and CPU seconds (user and system of every process it ran) of one command."""
    start = time.perf_counter()
    cpu = children_cpu()
    result = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{argv[0]} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return elapsed, children_cpu() - cpu


def built_archs(kernel: Path):
    """The archs our build compiled (metadata.json's backend.archs), as TORCH_CUDA_ARCH_LIST."""
    metadata = next((kernel / "build").glob("torch*/metadata.json"))
    return " ".join(json.loads(metadata.read_text())["backend"]["archs"])


def cold_rows(args, python: Path, env: dict):
    """Cold builds, row by row: kernel-builder (and --before) against cpp_extension with the same
    sources, defines, -O3, archs and MAX_JOBS, in rounds that rotate which goes first."""
    jobs = str(len(os.sched_getaffinity(0)))
    contestants = [("ours", args.kernel_builder)]
    if args.before:
        contestants.append(("before", args.before))
    names = [name for name, _ in contestants] + ["cpp_extension"]
    print(f"load average at the start: {load_average()}; MAX_JOBS={jobs}", flush=True)
    summary = []
    with tempfile.TemporaryDirectory(prefix="kernelhub-bench-rows-") as tmp:
        for row in args.rows.split(","):
            spec = ROWS[row]
            define = "CPU_KERNEL" if spec["backend"] == "cpu" else "CUDA_KERNEL"
            counter = iter(range(1 << 30))

            def copy():
                return committed(backend_only_copy(Path(tmp) / f"{row}{next(counter)}",
                                                   spec["source"], spec["backend"],
                                                   spec["table"], spec["all_archs"]))

            # --no-sandbox: bubblewrap's PID namespace keeps the CPU time of what runs inside
            # it from reaching our rusage (the build sandbox's own cost is --sandbox's to
            # measure: none measurable cold).
            def ours(binary):
                kernel = copy()
                return run_measured([binary, "build", kernel, "--python", python,
                                     "--no-sandbox"], env)

            def theirs(kernel, archs):
                project = next((kernel / "build" / ".kernelhub").glob("*/project"))
                build_dir = Path(tmp) / f"ext-{row}{next(counter)}"
                build_dir.mkdir()
                flags = ["-O3", f"-D{define}", "-DPy_LIMITED_API=0x03090000"]
                # cpp_extension defines __CUDA_NO_HALF_CONVERSIONS__ and the like for nvcc,
                # which our project does not (nor torch's CMake package): rmsnorm's kernels
                # convert __half to float and would not compile.
                undefine = [f"-U__CUDA_NO_{name}__" for name in (
                    "HALF_OPERATORS", "HALF_CONVERSIONS", "BFLOAT16_CONVERSIONS",
                    "HALF2_OPERATORS")]
                spec_json = {"name": f"_{row.replace('-', '_')}_bench",
                             "sources": [str(kernel / s) for s in spec["sources"]],
                             "includes": [str(project / "torch-ext"), str(kernel)],
                             "cflags": flags, "cuda_cflags": flags + undefine,
                             "build_dir": str(build_dir)}
                ext_env = dict(env, MAX_JOBS=jobs)
                if archs:
                    ext_env["TORCH_CUDA_ARCH_LIST"] = archs
                return run_measured([python, "-c", CPP_EXTENSION_ROW, json.dumps(spec_json)],
                                    ext_env)

            # Untimed: fills the probe and libstdc++ caches, warms the page cache, and gives the
            # archs our build chose and the project cpp_extension takes registration.h from.
            warm = copy()
            run_measured([args.kernel_builder, "build", warm, "--python", python, "--no-sandbox"],
                         env)
            archs = built_archs(warm) if spec["backend"] == "cuda" else ""
            theirs(warm, archs)
            if args.before:
                ours(args.before)
            times = {name: [] for name in names}
            cpus = {name: [] for name in names}
            for round_ in range(args.repeat):
                shift = round_ % len(names)
                for name in names[shift:] + names[:shift]:
                    if name == "cpp_extension":
                        elapsed, cpu = theirs(warm, archs)
                    else:
                        elapsed, cpu = ours(dict(contestants)[name])
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
                print(f"{row} round {round_ + 1}: " + ", ".join(
                    f"{name} {times[name][-1]:.2f} s ({cpus[name][-1]:.2f} CPU s)"
                    for name in names) + f"; ratio ours/cpp_extension "
                    f"{times['ours'][-1] / times['cpp_extension'][-1]:.2f} "
                    f"(load {load_average()})", flush=True)
            median = statistics.median
            line = (f"{row} ({archs or 'cpu'}): " + ", ".join(
                f"{name} {median(times[name]):.2f} s / {median(cpus[name]):.2f} CPU s"
                for name in names))
            for name, _ in contestants:
                line += (f"; {name}/cpp_extension {median(times[name]) / median(times['cpp_extension']):.2f}"
                         f" (CPU {median(cpus[name]) / median(cpus['cpp_extension']):.2f})")
            if args.before:
                line += (f"; ours/before {median(times['ours']) / median(times['before']):.2f}"
                         f" (CPU {median(cpus['ours']) / median(cpus['before']):.2f})")
            summary.append(line)
            print(line, flush=True)
    print("medians:")
    for line in summary:
        print("  " + line)
    print(f"load average at the end: {load_average()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel-builder", default=str(REPO / ".venv" / "bin" / "kernel-builder"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of cold builds")
    parser.add_argument("--noop-runs", type=int, default=5, help="no-op rebuilds per round")
    parser.add_argument("--sandbox", action="store_true",
                        help="measure only the build sandbox's cost: cold and no-op builds in "
                             "it and with --no-sandbox")
    parser.add_argument("--rows", help="time only cold builds of these rows, side by side with "
                        "cpp_extension: " + ", ".join(ROWS) + " (comma-separated)")
    parser.add_argument("--before", help="with --rows: a second kernel-builder timed in the same "
                        "rounds (main's, to compare a change)")
    args = parser.parse_args()
    python = Path(args.python)
    env = dict(os.environ, CCACHE_DISABLE="1")
    if args.rows:
        unknown = set(args.rows.split(",")) - set(ROWS)
        if unknown:
            parser.error(f"unknown rows: {', '.join(sorted(unknown))}")
        cold_rows(args, python, env)
        return
    if args.sandbox:
        sandbox_cost(args, python, env)
        return

    ours, theirs, noop = [], [], []
    ours_unchecked, noop_unchecked = [], []
    print(f"load average at the start: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kernelhub-bench-") as tmp:
        def ours_cold(name, *extra):
            kernel = committed(cpu_only_copy(Path(tmp) / name))
            build = [args.kernel_builder, "build", kernel, "--python", python, *extra]
            return kernel, build, timed(build, env=env)

        def theirs_cold(name, kernel):
            project = next((kernel / "build" / ".kernelhub").glob("*/project"))
            return cpp_extension_build(python, kernel, project, Path(tmp) / name, env)

        warm_kernel, _, _ = ours_cold("warmup")
        theirs_cold("warmup-ext", warm_kernel)
        for round_ in range(args.repeat):
            # Alternate which goes first, so a load that drifts over a round favours neither.
            if round_ % 2 == 0:
                kernel, build, elapsed = ours_cold(f"round{round_}")
                ours.append(elapsed)
                theirs.append(theirs_cold(f"ext{round_}", kernel))
            else:
                theirs.append(theirs_cold(f"ext{round_}", warm_kernel))
                kernel, build, elapsed = ours_cold(f"round{round_}")
                ours.append(elapsed)
            print(f"round {round_ + 1}: kernel-builder {ours[-1]:.2f} s, cpp_extension "
                  f"{theirs[-1]:.2f} s, ratio {ours[-1] / theirs[-1]:.2f} "
                  f"(load {load_average()})", flush=True)
            for _ in range(args.noop_runs):
                noop.append(timed(build, env=env))
                noop_unchecked.append(timed(build + ["--skip-checks"], env=env))
            ours_unchecked.append(ours_cold(f"bare{round_}", "--skip-checks")[2])

    median = statistics.median
    cold, ext_cold, noop_median = median(ours), median(theirs), median(noop)
    ratios = [a / b for a, b in zip(ours, theirs)]
    runs = lambda times: ", ".join(f"{t:.2f}" for t in times)  # noqa: E731
    print(f"kernel-builder build, cold (ccache off):   {cold:8.2f} s  (median; runs: "
          f"{runs(ours)})")
    print(f"cpp_extension.load, cold (ccache off):     {ext_cold:8.2f} s  (median; runs: "
          f"{runs(theirs)})")
    print(f"kernel-builder build, no-op rebuild:       {noop_median:8.3f} s  (median of "
          f"{len(noop)}; min {min(noop):.3f}, max {max(noop):.3f})")
    print(f"kernel-builder build --skip-checks, cold:  {median(ours_unchecked):8.2f} s  (median; "
          f"runs: {runs(ours_unchecked)})")
    print(f"kernel-builder build --skip-checks, no-op: {median(noop_unchecked):8.3f} s")
    print(f"ratio cold kernel-builder / cpp_extension: {cold / ext_cold:.2f} (median of the "
          f"medians; per round: {runs(ratios)})")
    print(f"ratio cold --skip-checks / cpp_extension:  {median(ours_unchecked) / ext_cold:.2f}")
    ours_cpu = median(CPU_SECONDS[t] for t in ours)
    theirs_cpu = median(CPU_SECONDS[t] for t in theirs)
    print(f"CPU seconds, cold: kernel-builder {ours_cpu:.2f}, cpp_extension {theirs_cpu:.2f} "
          f"(ratio {ours_cpu / theirs_cpu:.2f}; --skip-checks "
          f"{median(CPU_SECONDS[t] for t in ours_unchecked):.2f})")
    print(f"no-op under 0.1 s: {'yes' if noop_median < 0.1 else 'no'}")
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
