# SPDX-License-Identifier: Apache-2.0
"""Times `kernel-builder check-abi` against the reference kernel-abi-check on one large library.

    .venv/bin/python bench/abi/bench_check_abi.py [--binary PATH] [--repeat N] [LIBRARY]

LIBRARY defaults to the installed torch's libtorch_cpu.so. Prints the best of N runs of:
  floor      reading the whole file once (from the page cache, after a warm-up read)
  ours       `kernel-builder check-abi --json LIBRARY`, a whole process: start, embedded
             policy parsing, the manylinux, dependency and abi3 rules
  reference  kernel_abi_check.ObjectFile(LIBRARY) plus check_manylinux and
             check_python_abi, in this process (no interpreter start-up charged to it)
and the ratios. Both check the same rules with the defaults (manylinux_2_28, Python 3.9).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def best_of(repeat: int, action) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def read_whole_file(path: Path) -> None:
    buffer = bytearray(16 << 20)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as handle:
        while handle.readinto(view):
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", nargs="?", type=Path)
    parser.add_argument("--binary", type=Path, help="kernel-builder to time (default: .venv/bin, "
                        "then build/, then PATH)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import kernel_abi_check

    library = args.library
    if library is None:
        import torch

        library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    binary = args.binary
    for candidate in [REPO_ROOT / ".venv/bin/kernel-builder",
                      REPO_ROOT / "build/src/kernelhub/cli/kernel-builder"]:
        if binary is None and candidate.exists():
            binary = candidate
    if binary is None and shutil.which("kernel-builder"):
        binary = Path(shutil.which("kernel-builder"))
    if binary is None:
        print("kernel-builder not found; pass --binary", file=sys.stderr)
        return 2

    def ours() -> None:
        # Exit 1 only means violations were found; anything else is a failure.
        result = subprocess.run([str(binary), "check-abi", "--json", str(library)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if result.returncode not in (0, 1):
            raise RuntimeError(result.stderr.decode())

    def reference() -> None:
        obj = kernel_abi_check.ObjectFile(str(library))
        obj.check_manylinux("manylinux_2_28")
        obj.check_python_abi("3.9")

    read_whole_file(library)  # warm the page cache for every contender
    floor = best_of(args.repeat, lambda: read_whole_file(library))
    ours_time = best_of(args.repeat, ours)
    reference_time = best_of(args.repeat, reference)
    size_mb = library.stat().st_size / 1e6
    print(f"library    {library} ({size_mb:.0f} MB)")
    print(f"floor      {floor * 1e3:8.1f} ms  (read the file once)")
    print(f"ours       {ours_time * 1e3:8.1f} ms  ({binary})")
    print(f"reference  {reference_time * 1e3:8.1f} ms  (kernel-abi-check "
          f"{kernel_abi_check.__version__})")
    print(f"reference / ours   {reference_time / ours_time:6.1f}x")
    print(f"ours / floor       {ours_time / floor:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
