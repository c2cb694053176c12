# SPDX-License-Identifier: Apache-2.0
"""`kernelhub benchmark` (issue 15 item 3) on a cpu build of examples/relu: the table, the
JSON (the reference `kernels benchmark`'s shape, checked against the reference run on the same
folder), the SVG charts, the errors, and `--upload` into a kernel repo on `kernelhub serve`, whose
kernel page then draws the result (in headless Chromium).

The example is built once per session (about 20 s; conftest's `built_example`, shared with
the other files that need a cpu build of relu); every run uses a few iterations, so the whole
module takes about a minute. The reference picks its device from torch's build, CUDA here, with no
GPU: it is run with torch.version.cuda cleared so that it benchmarks the cpu variant too.
"""
import hashlib
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, copy_built, example_unique_id, run
from conftest import venv_cpu_variant as torch_variant
from headless_browser import CHROMIUM, Browser

PYTHON = VENV_BIN / "python"
TOKEN = "kh-bench-token"
UNIQUE_ID = example_unique_id("relu")  # the build's, the kernel's "commit sha"
WORKLOADS = ["ReluBenchmark.large", "ReluBenchmark.small"]
FAST = ["--iterations", "4", "--warmup", "1"]

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)


@pytest.fixture(scope="module")
def relu(built_example) -> Path:
    """examples/relu built for cpu only, with the fixed unique id UNIQUE_ID; shared: a test
    that changes it works on a copy (copy_with_script)."""
    example = built_example("relu", ["cpu"])
    assert example.result.returncode == 0, example.result.stderr
    return example.kernel


def copy_with_script(relu: Path, where: Path, script: str) -> Path:
    """The built kernel with benchmarks/benchmark.py replaced by `script`."""
    kernel = where / "kernel"
    copy_built(relu, kernel)
    (kernel / "benchmarks" / "benchmark.py").write_text(script)
    return kernel


def benchmark(kernelhub_bin, *args, cwd, env=None):
    # PATH first names the venv, for a kernelhub binary from a build tree (KERNELHUB_BIN_DIR)
    # that has no Python beside it.
    merged = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
    merged.update(env or {})
    return run([kernelhub_bin, "benchmark", *args], cwd=cwd, env=merged)


def shape(value):
    """A JSON value's structure: dict keys (recursively), list items, leaf types."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else type(value).__name__


def test_local_kernel_prints_the_table_and_writes_json_and_svg(kernelhub_bin, relu, tmp_path):
    result = benchmark(kernelhub_bin, relu, *FAST, "--json", "--output", tmp_path / "out.json",
                       "--visual", "relu", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    err = result.stderr
    # Issue 22 §6: a local folder is benchmarked, not downloaded.
    assert f"Benchmarking the local kernel at {relu}" in err
    assert "Downloading" not in err
    header = next(line for line in err.splitlines() if "Workload" in line)
    columns = [cell.strip() for cell in header.strip("│").split("│")]
    assert columns == ["Benchmark", "Workload", "N", "Speedup", "Mean(ms)", "Std(ms)",
                       "Min(ms)", "Max(ms)", "IQR(ms)", "Outliers", "Ref(ms)", "Match"]
    rows = [[cell.strip() for cell in line.strip("│").split("│")] for line in err.splitlines()
            if line.startswith("│ ReluBenchmark")]
    assert [row[1] for row in rows] == ["large", "small"]
    assert all(row[2] == "4" and row[-1] == "✓" and row[3].endswith("x") for row in rows)
    assert f"Kernel: {UNIQUE_ID[:7]}" in err

    # --json on stdout and --output are the same result.
    printed = json.loads(result.stdout)
    assert json.loads((tmp_path / "out.json").read_text()) == printed
    assert [r["workload"] for r in printed["results"]] == WORKLOADS
    script = (relu / "benchmarks" / "benchmark.py").read_bytes()
    assert printed["benchmarkScriptSha"] == hashlib.sha256(script).hexdigest()
    assert printed["kernelCommitSha"] == UNIQUE_ID
    assert printed["benchmarkScriptPath"] == "benchmarks"
    assert printed["machineInfo"]["backend"] == "CPU"
    assert printed["machineInfo"]["gpu"] == "N/A"
    for entry in printed["results"]:
        t = entry["timingResults"]
        assert entry["verified"] is True and t["iterations"] == 4
        assert 0 < t["min_ms"] <= t["q1_ms"] <= t["q3_ms"] <= t["max_ms"]
        assert t["min_ms"] <= t["mean_ms"] <= t["max_ms"]
        assert t["iqr_ms"] == pytest.approx(t["q3_ms"] - t["q1_ms"], abs=2e-4)

    # Both themes, real SVG documents that name every workload.
    for theme in ("light", "dark"):
        svg = tmp_path / "media" / f"relu_{theme}.svg"
        root = ET.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        text = svg.read_text()
        assert all(workload in text for workload in WORKLOADS)
        # Issue 22 §6: titled with the kernel's name (build.toml), not a filesystem path.
        assert str(relu) not in text
        assert ">relu</text>" in text


def test_json_has_the_reference_shape(kernelhub_bin, relu, tmp_path):
    """The reference's `kernels benchmark` and ours on one folder (whose script subclasses the
    reference's Benchmark: ours runs such scripts unchanged) give the same JSON but for the
    timings: same keys and nesting, workloads, machine, kernel and script hashes."""
    script = (relu / "benchmarks" / "benchmark.py").read_text()
    assert "from kernelhub import Benchmark" in script
    kernel = copy_with_script(relu, tmp_path, script.replace(
        "from kernelhub import Benchmark", "from kernels.benchmark import Benchmark"))
    reference = subprocess.run([str(PYTHON), "-c", (
        "import sys, torch\n"
        "torch.version.cuda = None  # no GPU here: let the reference pick cpu\n"
        "from kernels.cli.benchmark import run_benchmark\n"
        "run_benchmark(sys.argv[1], branch=None, version=None, iterations=4, warmup=1,"
        " output=sys.argv[2])\n"), str(kernel), str(tmp_path / "reference.json")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert reference.returncode == 0, reference.stderr
    ours = benchmark(kernelhub_bin, kernel, *FAST, "--output", tmp_path / "ours.json",
                     cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr

    theirs = json.loads((tmp_path / "reference.json").read_text())
    mine = json.loads((tmp_path / "ours.json").read_text())
    # Ours adds each verify_<w>'s mean, which the hub's chart draws; the rest is theirs.
    for entry in mine["results"]:
        assert entry["timingResults"].pop("ref_mean_ms") > 0
    assert shape(mine) == shape(theirs)
    for key in ("machineInfo", "kernelCommitSha", "benchmarkScriptPath", "benchmarkScriptSha"):
        assert mine[key] == theirs[key], key
    assert [(r["workload"], r["verified"], r["timingResults"]["iterations"])
            for r in mine["results"]] == \
        [(r["workload"], r["verified"], r["timingResults"]["iterations"])
         for r in theirs["results"]]


def test_a_wrong_result_fails_verification(kernelhub_bin, relu, tmp_path):
    script = (relu / "benchmarks" / "benchmark.py").read_text()
    kernel = copy_with_script(relu, tmp_path, script.replace(
        "    def verify_small(self) -> torch.Tensor:\n        return F.relu(self.x)",
        "    def verify_small(self) -> torch.Tensor:\n        return F.relu(self.x) + 1"))
    result = benchmark(kernelhub_bin, kernel, *FAST, "--output", tmp_path / "out.json",
                       cwd=tmp_path)
    assert result.returncode == 1
    assert "ReluBenchmark.small: out differs from verify_small's result" in result.stderr
    assert not (tmp_path / "out.json").exists()


def run_reference(kernel, tmp_path, *extra_path):
    """The reference's `kernels benchmark` on a local folder, on the cpu (torch.version.cuda
    cleared: there is no GPU here), with `extra_path` first on sys.path."""
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in extra_path)
    return subprocess.run([str(PYTHON), "-c", (
        "import sys, torch\n"
        "torch.version.cuda = None\n"
        "from kernels.cli.benchmark import run_benchmark\n"
        "run_benchmark(sys.argv[1], branch=None, version=None, iterations=2, warmup=1,"
        " output=sys.argv[2])\n"), str(kernel), str(tmp_path / "reference.json")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)


def test_the_readme_import_runs_under_both_tools(kernelhub_bin, relu, tmp_path):
    """Issue 22 §6: a script written as the README shows (`from kernelhub import Benchmark`)
    found no Benchmark subclass under the reference's `kernels benchmark`, which the card tells
    users to run. The same unchanged script now runs under both."""
    script = (relu / "benchmarks" / "benchmark.py").read_text()
    assert "from kernelhub import Benchmark" in script
    reference = run_reference(relu, tmp_path)
    assert reference.returncode == 0, reference.stderr
    theirs = json.loads((tmp_path / "reference.json").read_text())
    assert [r["workload"] for r in theirs["results"]] == WORKLOADS
    ours = benchmark(kernelhub_bin, relu, *FAST, "--json", cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert [r["workload"] for r in json.loads(ours.stdout)["results"]] == WORKLOADS


def test_the_reference_import_runs_without_the_reference_installed(kernelhub_bin, relu,
                                                                   tmp_path):
    """A script in the reference's way (`from kernels.benchmark import Benchmark`, as `init`
    writes it) runs under `kernelhub benchmark` in an environment without `kernels`."""
    script = (relu / "benchmarks" / "benchmark.py").read_text()
    kernel = copy_with_script(relu, tmp_path, script.replace(
        "from kernelhub import Benchmark", "from kernels.benchmark import Benchmark"))
    # No `kernels` package: an import finder that refuses it, installed at start-up.
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoKernels:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kernels' or name.startswith('kernels.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _NoKernels())\n")
    result = benchmark(kernelhub_bin, kernel, *FAST, "--json", cwd=tmp_path,
                       env={"PYTHONPATH": str(hide)})
    assert result.returncode == 0, result.stderr
    assert [r["workload"] for r in json.loads(result.stdout)["results"]] == WORKLOADS


def test_workload_times_only_the_named_ones_and_progress_is_printed(kernelhub_bin, relu,
                                                                    tmp_path):
    """Issue 22 §6: a slow workload could not be left out, and nothing was printed until every
    workload had been timed."""
    result = benchmark(kernelhub_bin, relu, *FAST, "--workload", "small", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [r["workload"] for r in json.loads(result.stdout)["results"]] == \
        ["ReluBenchmark.small"]
    assert "[1/1] ReluBenchmark.small: setup, then 4 timed calls after 1 warm-up" in result.stderr
    assert "[1/1] ReluBenchmark.small: " in result.stderr.split("warm-up", 1)[1]
    assert "ReluBenchmark.large" not in result.stderr

    both = benchmark(kernelhub_bin, relu, *FAST, "--workload", "ReluBenchmark.large",
                     "--workload", "small", "--json", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert [r["workload"] for r in json.loads(both.stdout)["results"]] == WORKLOADS
    assert "[2/2] ReluBenchmark.small" in both.stderr

    unknown = benchmark(kernelhub_bin, relu, *FAST, "--workload", "huge", cwd=tmp_path)
    assert unknown.returncode == 1
    assert ("error: no workload 'huge'; the scripts define: ReluBenchmark.large, "
            "ReluBenchmark.small") in unknown.stderr


@pytest.mark.parametrize("args, message", [
    (["org/relu"], "'org/relu': give a version (--version N or org/relu@v<N>) or a branch"),
    (["org/relu@1"], "version '1' must be written 'v1'"),
    (["org/relu@v1", "--iterations", "0"], "--iterations must be at least 1, not 0"),
    (["org/relu", "--branch", "a" * 40, "--upload"],
     f"--upload needs a branch or version, not the commit '{'a' * 40}'"),
    ([".", "--upload"], "--upload needs a Hub repo id, not the local folder '.'"),
    ([".", "--iterations", "1"], "'.' has no benchmarks/ folder"),
])
def test_revision_and_option_errors(kernelhub_bin, tmp_path, args, message):
    result = benchmark(kernelhub_bin, *args, cwd=tmp_path)
    assert result.returncode == 1
    assert f"error: {message}" in result.stderr


def test_the_python_beside_the_binary_runs_the_benchmark(kernelhub_bin, tmp_path):
    """Installed into .venv/bin, kernelhub uses .venv/bin/python3 (which has the kernelhub
    package) even when PATH names no Python that has it."""
    if kernelhub_bin.parent != VENV_BIN:
        pytest.skip("kernelhub is not the one installed in .venv/bin")
    result = run([kernelhub_bin, "benchmark", "org/relu"], cwd=tmp_path,
                 env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 1
    # The runner's own message: the package was imported.
    assert "error: 'org/relu': give a version" in result.stderr


def test_an_unbuilt_kernel_is_told_to_build(kernelhub_bin, tmp_path):
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(REPO_ROOT / "examples" / "relu" / "benchmarks" / "benchmark.py",
                tmp_path / "benchmarks")
    result = benchmark(kernelhub_bin, ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "error: '.' has no build/ folder: build the kernel first (kernel-builder build .)" \
        in result.stderr


def test_visual_without_matplotlib_names_the_install_before_timing(kernelhub_bin, relu,
                                                                   tmp_path):
    # A matplotlib that cannot be imported, first on the path.
    (tmp_path / "shadow" / "matplotlib").mkdir(parents=True)
    (tmp_path / "shadow" / "matplotlib" / "__init__.py").write_text(
        "raise ImportError('matplotlib hidden by the test')\n")
    result = benchmark(kernelhub_bin, relu, *FAST, "--visual", "x", cwd=tmp_path,
                       env={"PYTHONPATH": str(tmp_path / "shadow")})
    assert result.returncode == 1
    assert "pip install matplotlib" in result.stderr
    assert "Running" not in result.stderr
    assert not (tmp_path / "media").exists()


def test_a_missing_python_is_named(kernelhub_bin, tmp_path):
    result = run([kernelhub_bin, "benchmark", "org/relu@v1", "--python",
                  tmp_path / "no-python"], cwd=tmp_path)
    assert result.returncode == 1
    assert f'Python "{tmp_path / "no-python"}"' in result.stderr


@pytest.fixture()
def hub(kernelhub_bin, tmp_path):
    """`kernelhub serve` on a fresh root whose org `bench` is a trusted kernel publisher (the
    loader, as the reference, loads only trusted publishers' kernels by default)."""
    root = tmp_path / "hub-root"
    root.mkdir()
    (root / "config.toml").write_text("[organizations.bench]\ntrustedKernelPublisher = true\n")
    (tmp_path / "tokens").write_text(TOKEN + "\n")
    server = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp_path / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    if not url.startswith("http://"):
        server.kill()
        pytest.fail(f"kernelhub serve did not start: {server.stderr.read()}")
    yield url
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def test_upload_stores_the_result_under_benchmarks_variant_device(kernelhub_bin, kernel_builder,
                                                                 relu, hub, tmp_path):
    env = {"HF_ENDPOINT": hub, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp_path / "home"),
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    run([kernel_builder, "upload", relu, "--repo-id", "bench/relu", "--branch", "v1",
         "--python", PYTHON],
        env=env, check=True)
    result = benchmark(kernelhub_bin, "bench/relu@v1", *FAST, "--upload", "--output",
                       tmp_path / "out.json", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr

    listing = subprocess.run([str(PYTHON), "-c", (
        "import json, sys\n"
        "from huggingface_hub import HfApi, hf_hub_download\n"
        "api = HfApi()\n"
        "files = sorted(api.list_repo_files('bench/relu', repo_type='kernel', revision='v1'))\n"
        "uploaded = [f for f in files if f.startswith('benchmarks/') and f.endswith('.json')]\n"
        "bodies = {f: json.load(open(hf_hub_download('bench/relu', f, repo_type='kernel',"
        " revision='v1'))) for f in uploaded}\n"
        "print(json.dumps({'files': files, 'bodies': bodies}))\n")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, **env))
    assert listing.returncode == 0, listing.stderr
    found = json.loads(listing.stdout.strip().splitlines()[-1])
    assert "benchmarks/benchmark.py" in found["files"]  # the script ran from the hub's copy
    [path] = found["bodies"]
    folder, variant, device = path.split("/")
    assert (folder, variant) == ("benchmarks", torch_variant())
    assert device.startswith("cpu-") and device.endswith(".json")
    assert f"Uploaded to bench/relu@v1: {path}" in result.stderr
    assert found["bodies"][path] == json.loads((tmp_path / "out.json").read_text())

    # The kernel page draws it: one bar per workload, and the table's rows name the run.
    if CHROMIUM is None:
        pytest.skip("the page check needs Debian's chromium (scripts/setup.sh installs it)")
    with Browser() as browser:
        page = browser.load(f"{hub}/kernels/bench/relu")
    svg = page.find("figure", class_="chart").find("svg")
    assert len(svg.find_all("rect", class_="bar")) == len(WORKLOADS)
    assert [row[:3] for row in page.by_id("benchmark-table").rows()] == \
        [[variant, device[:-len(".json")], workload] for workload in WORKLOADS]


def test_required_signatures_refuse_the_hubs_unsigned_scripts(kernelhub_bin, kernel_builder,
                                                              relu, hub, tmp_path):
    """Issue 20 item 7: a signature covers a kernel's build variants, not its benchmarks/. With
    KERNELHUB_REQUIRE_SIGNATURE=1 a Hub kernel whose variant is signed by a trusted key loads,
    but its benchmark script is refused rather than run."""
    marker = tmp_path / "script.ran"
    script = (relu / "benchmarks" / "benchmark.py").read_text()
    kernel = copy_with_script(relu, tmp_path, f"from pathlib import Path\n"
                              f"Path({str(marker)!r}).write_text('ran')\n" + script)
    run([kernel_builder, "keygen", "--output", tmp_path / "team.pem"], check=True)
    run([kernel_builder, "sign", kernel, "--key", tmp_path / "team.pem"], check=True)
    env = {"HF_ENDPOINT": hub, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp_path / "home"),
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    run([kernel_builder, "upload", kernel, "--repo-id", "bench/signed", "--branch", "v1",
         "--python", PYTHON], env=env, check=True)
    required = dict(env, KERNELHUB_REQUIRE_SIGNATURE="1",
                    KERNELHUB_TRUSTED_KEYS=str(tmp_path / "team.pub"))
    result = benchmark(kernelhub_bin, "bench/signed@v1", *FAST, cwd=tmp_path, env=required)
    assert result.returncode == 1, result.stderr
    assert ("error: signatures are required (KERNELHUB_REQUIRE_SIGNATURE), and the benchmark "
            "scripts of bench/signed@v1 (benchmarks/*.py) are covered by no signature, so they "
            "are not run") in result.stderr
    assert not marker.exists()
    # The kernel itself loads under the same settings: the refusal is the script's.
    loaded = run([PYTHON, "-c", "import kernelhub; kernelhub.get_kernel('bench/signed', "
                  "version=1, backend='cpu')"], cwd=tmp_path, env=required)
    assert loaded.returncode == 0, loaded.stderr


def test_statistics_match_the_reference_on_the_same_samples():
    """Quartiles, IQR, outliers, mean and std of ours and of the reference's runner over the
    same samples (odd and even counts, ties, one sample, a far outlier)."""
    script = (
        "import json, random\n"
        "from kernels.cli.benchmark import _percentile, _calculate_iqr_and_outliers\n"
        "from kernelhub._benchmark_timing import summarize\n"
        "rng = random.Random(7)\n"
        "cases = [[1.0], [2.0, 1.0], [1.0, 1.0, 1.0, 9.0], [0.5, 0.7, 0.6, 30.0, 0.55]]\n"
        "cases += [[rng.lognormvariate(0, 1) for _ in range(n)] for n in (3, 10, 101)]\n"
        "out = []\n"
        "for samples in cases:\n"
        "    q1, q3, iqr, outliers = _calculate_iqr_and_outliers(samples)\n"
        "    mean = sum(samples) / len(samples)\n"
        "    std = (sum((s - mean) ** 2 for s in samples) / len(samples)) ** 0.5\n"
        "    t = summarize(samples)\n"
        "    out.append([[round(q1, 4), round(q3, 4), round(iqr, 4), outliers,\n"
        "                 round(mean, 4), round(std, 4), round(min(samples), 4),\n"
        "                 round(max(samples), 4)],\n"
        "                [t.q1_ms, t.q3_ms, t.iqr_ms, t.outliers, t.mean_ms, t.std_ms,\n"
        "                 t.min_ms, t.max_ms]])\n"
        "print(json.dumps(out))\n")
    result = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    pairs = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(pairs) == 7
    for reference, ours in pairs:
        assert ours == pytest.approx(reference, abs=1.5e-4), (reference, ours)
    assert pairs[3][1][3] == 1  # 9.0 among three 1.0s is the one outlier
