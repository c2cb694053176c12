# SPDX-License-Identifier: Apache-2.0
"""kernelize and warm local loads: our `kernelhub` against the reference `kernels`, side by
side in one run, plus the floor a warm load can approach.

    .venv/bin/python bench/loader/bench_kernelize.py [--layers 100] [--repeat 7]
        [--kernel-dir DIR] [--json FILE]

One run builds examples/relu for cpu (or takes a built kernel folder with --kernel-dir) and
writes a cpu kernel variant with a `layers` module (a kernel layer `Scale`) into a temporary
folder, then measures in fresh processes (torch imported first, not timed; median of --repeat
processes, interleaved):
  import-floor      importlib.util.spec_from_file_location + exec_module of relu's variant
                    __init__.py (its library loaded, its ops registered): what any loader must
                    at least do
  import-package    `import <package>`
  local-load        get_local_kernel(relu's kernel folder, backend="cpu") after the import: the
                    variant choice, the metadata checks and the import
  kernelize-first   kernelize(model, mode=INFERENCE, device="cpu") of a model with --layers
                    decorated modules mapped to LocalLayerRepository: the first call (loads and
                    validates the kernel layer, then binds every forward)
  kernelize-again   further kernelize calls on the same model (the layer is cached: the
                    per-module cost), median of 20 calls
Ratios are reference time / our time (above 1: ours is faster); local-load is also printed as
a multiple of the import floor (the aim: a warm load within 2x the floor).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

METADATA = {
    "name": "scale-bench",
    "id": "_scale_bench_cpu_b3nch00",
    "version": 1,
    "license": "apache-2.0",
    "python-depends": [],
    "backend": {"type": "cpu"},
}

INIT = textwrap.dedent("""
    import torch
    from . import layers

    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 2
""")

LAYERS = textwrap.dedent("""
    import torch

    class Scale(torch.nn.Module):
        can_torch_compile = True

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2
""")

CHILD = textwrap.dedent("""
    import importlib.util, json, sys, time
    from pathlib import Path
    import torch
    side, variant, layers = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    relu = Path(sys.argv[4])
    out = {}
    if side == "floor":
        relu_variant = next(p for p in (relu / "build").iterdir() if (p / "__init__.py").exists())
        start = time.perf_counter()
        spec = importlib.util.spec_from_file_location(
            "_relu_bench_floor", relu_variant / "__init__.py",
            submodule_search_locations=[str(relu_variant)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        out["import-floor"] = time.perf_counter() - start
        print(json.dumps(out))
        raise SystemExit
    start = time.perf_counter()
    if side == "ours":
        import kernelhub as package
    else:
        import kernels as package
    out["import-package"] = time.perf_counter() - start
    start = time.perf_counter()
    package.get_local_kernel(relu, backend="cpu")
    out["local-load"] = time.perf_counter() - start

    @package.use_kernel_forward_from_hub("Scale")
    class Scale(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + x

    model = torch.nn.Sequential(*[Scale() for _ in range(layers)])
    package.register_kernel_mapping(
        {"Scale": {"cpu": package.LocalLayerRepository(variant, layer_name="Scale")}})
    start = time.perf_counter()
    package.kernelize(model, mode=package.Mode.INFERENCE, device="cpu")
    out["kernelize-first"] = time.perf_counter() - start
    again = []
    for _ in range(20):
        start = time.perf_counter()
        package.kernelize(model, mode=package.Mode.INFERENCE, device="cpu")
        again.append(time.perf_counter() - start)
    out["kernelize-again"] = sorted(again)[len(again) // 2]
    x = torch.randn(8)
    kernel_class = type(model[0]).forward is not model[0].forward.__func__
    out["kernelized"] = bool(kernel_class and torch.allclose(model(x), x * float(2 ** layers)))
    print(json.dumps(out))
""")


def write_variant(root: Path) -> Path:
    variant = root / "scale-bench" / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(METADATA, indent=2) + "\n")
    (variant / "__init__.py").write_text(INIT)
    (variant / "layers.py").write_text(LAYERS)
    return variant


def build_relu(work: Path) -> Path:
    kernel = work / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build"))
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    print("bench: building examples/relu (cpu) ...", flush=True)
    builder = REPO_ROOT / ".venv" / "bin" / "kernel-builder"
    result = subprocess.run([str(builder), "build", str(kernel), "--python", sys.executable,
                             "--skip-checks"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"building relu failed:\n{result.stdout}\n{result.stderr}")
    return kernel


def run_child(side: str, variant: Path, layers: int, relu: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, side, str(variant), str(layers),
                             str(relu)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{side} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--kernel-dir", type=Path, help="an already built relu (skips the build)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        variant = write_variant(Path(tmp))
        relu = args.kernel_dir or build_relu(Path(tmp))
        runs: dict[str, list[dict]] = {"ours": [], "reference": [], "floor": []}
        for _ in range(args.repeat):  # interleaved, so a load spike hits every side alike
            for side in runs:
                runs[side].append(run_child(side, variant, args.layers, relu))
    for side in ("ours", "reference"):
        if not all(run["kernelized"] for run in runs[side]):
            raise SystemExit(f"{side}: the model was not kernelized as expected")

    def median_ms(side: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[side]) * 1000

    floor = median_ms("floor", "import-floor")
    rows = []
    print(f"{'phase':<18}{'ours ms':>10}{'reference ms':>14}{'ratio':>9}")
    for key in ("import-package", "local-load", "kernelize-first", "kernelize-again"):
        ours, reference = median_ms("ours", key), median_ms("reference", key)
        rows.append({"phase": key, "ours_ms": ours, "reference_ms": reference,
                     "ratio": reference / ours})
        print(f"{key:<18}{ours:>10.2f}{reference:>14.2f}{reference / ours:>8.2f}x")
    ours_load = median_ms("ours", "local-load")
    print(f"{'import-floor':<18}{floor:>10.2f}")
    print(f"warm local load = {ours_load / floor:.2f}x the import floor "
          f"(reference: {median_ms('reference', 'local-load') / floor:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps({"layers": args.layers, "rows": rows,
                                         "import_floor_ms": floor}, indent=2) + "\n")


if __name__ == "__main__":
    main()
