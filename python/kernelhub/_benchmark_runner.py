# SPDX-License-Identifier: Apache-2.0
"""The runner behind `kernelhub benchmark` (the reference's `kernels benchmark`): finds a
kernel's `benchmarks/benchmark*.py`, times every `benchmark_<w>` of their Benchmark subclasses
against the kernel, checks `verify_<w>`, prints a table, and writes the reference's JSON.

Beyond the reference: the device decides the variant (`backend=` of get_kernel), so a CUDA
build of torch on a machine without a GPU benchmarks the cpu variant on the cpu; scripts that
subclass `kernels.benchmark.Benchmark` run unchanged; `--upload` stores the result in the
kernel's repo on the hub as `benchmarks/<variant>/<device>.json`; with
KERNELHUB_REQUIRE_SIGNATURE a Hub kernel's scripts are refused (no signature covers them).

Run as `python -m kernelhub._benchmark_runner REPO_ID|PATH [options]`; the C++ `kernelhub
benchmark` starts it that way. Messages go to stderr, `--json` alone to stdout.
"""
import argparse
import hashlib
import importlib.util
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ._benchmark_machine import _pick_device, device_slug, machine_info
from ._benchmark_report import payload, results_table, significance_lines
from ._benchmark_timing import BenchmarkError, Timing, run_class, wanted, workloads_of

# Where a benchmark class may come from: ours, or the reference's (checked by name along the
# MRO so that the reference package need not be imported to recognise its scripts).
_BASE_CLASSES = {("kernelhub.benchmark", "Benchmark"), ("kernels.benchmark", "Benchmark")}
_SCRIPT_MODULE = "benchmark_module"


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
    parser.add_argument("--workload", action="append", metavar="NAME",
                        help="time only this workload (`large` or `Class.large`); repeatable")
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


def _stand_in_for_the_reference() -> None:
    """Without the reference package installed, `import kernels` and `from kernels.benchmark
    import Benchmark` (the reference's way, which its own runner needs) name kernelhub, whose
    API is the reference's: such scripts run here unchanged."""
    try:
        missing = importlib.util.find_spec("kernels") is None
    except (ImportError, ValueError):
        missing = True
    if missing and "kernels" not in sys.modules:
        from . import benchmark as ours
        import kernelhub

        sys.modules["kernels"] = kernelhub
        sys.modules["kernels.benchmark"] = ours


def load_classes(script: Path, cwd: Path) -> list[type]:
    """The Benchmark subclasses the script defines itself (imported ones are skipped); the
    script is executed with the kernel's folder as working directory, as the reference does."""
    _stand_in_for_the_reference()
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


def _refuse_unsigned_scripts(target: Target) -> None:
    """With signatures required, a Hub kernel's benchmark scripts are not run: a signature
    covers the files of a build variant, and benchmarks/ is outside every variant, so whoever
    can write the repository (or the cache) decides what those scripts do."""
    from . import _kernelhub

    try:
        required = _kernelhub.signature_required(None)
    except ValueError as exc:
        raise BenchmarkError(str(exc)) from exc
    if required:
        raise BenchmarkError(
            f"signatures are required (KERNELHUB_REQUIRE_SIGNATURE), and the benchmark scripts "
            f"of {target.repo_id}@{target.revision} (benchmarks/*.py) are covered by no "
            f"signature, so they are not run; benchmark a local checkout you have read, or run "
            f"this command without KERNELHUB_REQUIRE_SIGNATURE")


def chart_title(target: Target) -> str:
    """A Hub kernel's repo id; a local kernel's Hub repo id from build.toml ([general.hub]
    repo-id), else its name there, else its folder's name: never a filesystem path."""
    if target.local_path is None:
        return target.repo_id
    try:
        import tomllib

        general = tomllib.loads((target.local_path / "build.toml").read_text()).get("general", {})
    except (OSError, ValueError):
        general = {}
    hub = general.get("hub") if isinstance(general, dict) else None
    for value in ((hub or {}).get("repo-id") if isinstance(hub, dict) else None,
                  general.get("name") if isinstance(general, dict) else None):
        if isinstance(value, str) and value:
            return value
    return target.local_path.name


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

    if target.local_path is None:
        _refuse_unsigned_scripts(target)
    if target.local_path is None:
        print(f"Downloading {target.repo_id}@{target.revision}...", file=sys.stderr)
    else:
        print(f"Benchmarking the local kernel at {target.local_path}", file=sys.stderr)
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
    loaded = [(script, load_classes(script, root)) for script in scripts]
    for script, classes in loaded:
        if not classes:
            raise BenchmarkError(f"'{script}' defines no Benchmark subclass")
    if args.workload:
        # Every name checked before minutes of timing start.
        known = [f"{cls.__name__}.{w}" for _script, classes in loaded for cls in classes
                 for w in workloads_of(cls)]
        for name in args.workload:
            if not any(wanted(cls, w, [name]) for _script, classes in loaded
                       for cls in classes for w in workloads_of(cls)):
                raise BenchmarkError(f"no workload '{name}'; the scripts define: "
                                     f"{', '.join(sorted(known))}")
    for script, classes in loaded:
        if args.workload and not any(wanted(cls, w, args.workload)
                                     for cls in classes for w in workloads_of(cls)):
            continue
        print(f"Running {script.name}...", file=sys.stderr)
        print(f"\n  GPU      {info['gpu']}\n  CPU      {info['cpu']}\n  OS       {info['os']}\n"
              f"  PyTorch  {info['pytorchVersion']}\n", file=sys.stderr)
        for cls in classes:
            for workload, timing in run_class(torch, cls, kernel, device, args.iterations,
                                              args.warmup, args.workload).items():
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

        for path in write_charts(timings, args.visual, chart_title(target), info,
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
    sys.exit(main())
