#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build time of examples/relu (cpu): `kernel-builder build` against torch.utils.cpp_extension.

Run by hand, not in CI (each cold build compiles against torch's headers: about a minute):

    .venv/bin/python bench/build/bench_build.py [--kernel-builder PATH] [--repeat N]

Measured, with ccache disabled (CCACHE_DISABLE=1) so a cold build really compiles:
  - cold `kernel-builder build` of a fresh copy of examples/relu restricted to its cpu
    backend: CMake configure, the compile, the variant assembly and metadata;
  - cold torch.utils.cpp_extension.load of the same two sources (with our registration.h, the
    same TORCH_EXTENSION_NAME scheme and -O3, as the CMake project's Release build) into a
    fresh build folder;
  - the no-op rebuild: `kernel-builder build` again with nothing changed (median of runs).
It prints the times and the ratios.
"""
import argparse
import os
import re
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


def cpu_only_copy(destination: Path) -> Path:
    """examples/relu with only its cpu backend: the comparison is of C++ builds."""
    kernel = destination / "relu"
    shutil.copytree(RELU, kernel, ignore=shutil.ignore_patterns("build", "tests"))
    text = (kernel / "build.toml").read_text()
    text = re.sub(r"backends = \[[^\]]*\]", 'backends = ["cpu"]', text)
    # Drop every [kernel.*] table that is not the cpu one.
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        header = re.match(r"\[kernel\.([^\]]+)\]", line)
        if header:
            keep = header.group(1) == "relu_cpu"
        elif line.startswith("["):
            keep = True
        if keep:
            kept.append(line)
    (kernel / "build.toml").write_text("".join(kept))
    return kernel


def timed(argv, env=None, cwd=None):
    start = time.perf_counter()
    result = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True,
                            text=True)
    elapsed = time.perf_counter() - start
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
    result = subprocess.run([str(python), "-c", CPP_EXTENSION, str(kernel), str(project),
                             str(build_dir)], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"cpp_extension failed:\n{result.stdout}\n{result.stderr}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel-builder", default=str(REPO / ".venv" / "bin" / "kernel-builder"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeat", type=int, default=1, help="cold builds of each kind")
    parser.add_argument("--noop-runs", type=int, default=5)
    args = parser.parse_args()
    python = Path(args.python)
    env = dict(os.environ, CCACHE_DISABLE="1")

    ours, theirs, noop = [], [], []
    ours_unchecked, noop_unchecked = [], []
    with tempfile.TemporaryDirectory(prefix="kernelhub-bench-") as tmp:
        for round_ in range(args.repeat):
            kernel = committed(cpu_only_copy(Path(tmp) / f"round{round_}"))
            build = [args.kernel_builder, "build", kernel, "--python", python]
            ours.append(timed(build, env=env))
            for _ in range(args.noop_runs):
                noop.append(timed(build, env=env))
                noop_unchecked.append(timed(build + ["--skip-checks"], env=env))
            bare = committed(cpu_only_copy(Path(tmp) / f"bare{round_}"))
            ours_unchecked.append(timed([args.kernel_builder, "build", bare, "--python", python,
                                         "--skip-checks"], env=env))
            project = next((kernel / "build" / ".kernelhub").glob("*/project"))
            theirs.append(cpp_extension_build(python, kernel, project,
                                              Path(tmp) / f"ext{round_}", env))

    cold, ext_cold, noop_median = min(ours), min(theirs), statistics.median(noop)
    print(f"kernel-builder build, cold (ccache off): {cold:8.2f} s  (runs: "
          + ", ".join(f"{t:.2f}" for t in ours) + ")")
    print(f"cpp_extension.load, cold (ccache off):   {ext_cold:8.2f} s  (runs: "
          + ", ".join(f"{t:.2f}" for t in theirs) + ")")
    print(f"kernel-builder build, no-op rebuild:     {noop_median:8.3f} s  (median of "
          f"{len(noop)}; min {min(noop):.3f}, max {max(noop):.3f})")
    print(f"kernel-builder build --skip-checks, cold: {min(ours_unchecked):8.2f} s")
    print(f"kernel-builder build --skip-checks, no-op: {statistics.median(noop_unchecked):8.3f} s")
    print(f"ratio cold kernel-builder / cpp_extension: {cold / ext_cold:.2f}")
    print(f"ratio cold kernel-builder --skip-checks / cpp_extension: "
          f"{min(ours_unchecked) / ext_cold:.2f}")
    print(f"ratio no-op / cold kernel-builder:         {noop_median / cold:.4f}")
    print(f"no-op under 0.5 s: {'yes' if noop_median < 0.5 else 'no'}")


if __name__ == "__main__":
    main()
