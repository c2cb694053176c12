# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build` for [tvm-ffi] kernels (examples/relu-tvm-ffi), loaded by the REFERENCE.

The example is built once per session (conftest's `built_example`, every backend this machine
builds, shared with test_kernel_test_command.py). Its cpu variant must carry the reference's
variant name (`tvm-ffi<flat tvm-ffi>-cpu-<cpu>-<os>`, parsed back by `kernels.variants`), hold
`__init__.py`, `_ops.py`, `<id>.so` and `metadata.json` (read and digest-checked by
kernels_data), and be loaded by `kernels.get_local_kernel` (kernels 0.17.2, with
apache-tvm-ffi in the venv), whose relu must match torch's. `kernel-builder test` runs the
example's kernels_ci tests on it. The cuda variant (where nvcc is found) is marked slow.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run
from layers_support import venv_has_tvm_ffi
from test_check_abi import reference_findings

PYTHON = VENV_BIN / "python"
EXAMPLE = REPO_ROOT / "examples" / "relu-tvm-ffi"


pytestmark = pytest.mark.skipif(
    not venv_has_tvm_ffi() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch and apache-tvm-ffi (requirements-dev.txt), cmake, ninja",
)


def python_json(script: str):
    """Runs `script` in the venv's Python; its last stdout line is JSON. KERNELHUB_PYTHON_DIR,
    when set, puts a build tree's `kernelhub` package (<build>/python) first on the path."""
    env = dict(os.environ)
    if os.environ.get("KERNELHUB_PYTHON_DIR"):
        env["PYTHONPATH"] = os.environ["KERNELHUB_PYTHON_DIR"] + os.pathsep + env.get(
            "PYTHONPATH", "")
    result = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def copy_example(root: Path, backends: str) -> Path:
    kernel = root / "relu-tvm-ffi"
    shutil.copytree(EXAMPLE, kernel, ignore=shutil.ignore_patterns("build"))
    toml = kernel / "build.toml"
    text = toml.read_text().replace('backends = ["cpu", "cuda"]', f"backends = {backends}")
    toml.write_text(text)
    return kernel


def build(kernel_builder, kernel_dir, python=PYTHON):
    return run([kernel_builder, "build", kernel_dir, "--python", python, "--json"])


@pytest.fixture(scope="module")
def reference_names():
    """What the reference makes of this machine: the tvm-ffi cpu variant name and the system."""
    return python_json("""
import json, platform, tvm_ffi
from packaging.version import parse
v = parse(tvm_ffi.__version__)
print(json.dumps({"cpu": f"tvm-ffi{v.major}{v.minor}-cpu-{platform.machine()}-linux"}))
""")


def backend_variants(summary, backend):
    return [variant for variant in summary["variants"] if variant["backend"] == backend]


@pytest.fixture(scope="module")
def example_build(built_example):
    example = built_example(EXAMPLE.name)
    return example.kernel, example.summary


@pytest.fixture(scope="module")
def cpu_build(example_build):
    """The example's folder and the build's report with only its cpu variant in "variants"."""
    kernel, summary = example_build
    return kernel, dict(summary, variants=backend_variants(summary, "cpu"))


def test_cpu_variant_has_the_reference_name(cpu_build, reference_names):
    _, summary = cpu_build
    names = [variant["name"] for variant in summary["variants"]]
    assert names == [reference_names["cpu"]]
    # The reference's parser reads it as a tvm-ffi arch variant and writes the same name back.
    parsed = python_json(f"""
import json
from kernels.variants import TvmFfi, parse_variant
v = parse_variant({names[0]!r})
print(json.dumps({{"tvm_ffi": isinstance(v.framework, TvmFfi), "str": v.variant_str}}))
""")
    assert parsed == {"tvm_ffi": True, "str": names[0]}


def test_cpu_variant_layout_and_metadata(cpu_build):
    kernel, summary = cpu_build
    built = summary["variants"][0]
    kernel_id = built["id"]
    assert kernel_id == f"_relu_tvm_ffi_cpu_{summary['unique_id']}"
    variant = kernel / "build" / built["name"]
    assert sorted(p.name for p in variant.iterdir()) == sorted(
        ["__init__.py", "_ops.py", f"{kernel_id}.so", "metadata.json"])
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["id"] == kernel_id
    assert metadata["name"] == "relu-tvm-ffi"
    assert metadata["backend"] == {"type": "cpu"}

    import kernels_data as kd

    read = kd.Metadata.from_bytes((variant / "metadata.json").read_bytes())
    assert read.id == kernel_id
    read.digest.validate(kd.Digest.hash_variant(kd.DigestAlgorithm.SHA256, variant))
    # A plain shared library for tvm_ffi.load_module: no rpath into this machine's venv.
    dynamic = subprocess.run(["readelf", "-d", str(variant / f"{kernel_id}.so")],
                             capture_output=True, text=True, check=True).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic
    # libtvm_ffi comes from the process (see docs/tvm-ffi.md), so nothing outside manylinux.
    assert "libtvm_ffi" not in dynamic


def test_reference_abi_check_finds_nothing(cpu_build):
    kernel_abi_check = pytest.importorskip("kernel_abi_check")
    kernel, summary = cpu_build
    built = summary["variants"][0]
    library = kernel / "build" / built["name"] / f"{built['id']}.so"
    assert reference_findings(kernel_abi_check.ObjectFile(str(library))) == set()


def test_reference_loader_runs_the_cpu_variant(cpu_build):
    kernel, summary = cpu_build
    result = python_json(f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel)!r}), backend="cpu")
x = torch.randn(33, 1000)
out = torch.full_like(x, float("nan"))
same = torch.equal(k.relu(x), torch.relu(x))
into = k.relu(x, out) is out and torch.equal(out, torch.relu(x))
print(json.dumps({{"module": k.__name__, "same": same, "into": into}}))
""")
    assert result == {"module": summary["variants"][0]["id"], "same": True, "into": True}


def test_our_loader_runs_the_cpu_variant_too(cpu_build):
    kernel, summary = cpu_build
    result = python_json(f"""
import json, pathlib, torch
try:
    import kernelhub
except ImportError:
    kernelhub = None
if kernelhub is None:
    print(json.dumps(None))
else:
    k = kernelhub.get_local_kernel(pathlib.Path({str(kernel)!r}), backend="cpu")
    x = torch.randn(257)
    print(json.dumps({{"module": k.__name__, "same": torch.equal(k.relu(x), torch.relu(x))}}))
""")
    if result is None:
        pytest.skip("the kernelhub Python package is not installed (set KERNELHUB_PYTHON_DIR)")
    assert result == {"module": summary["variants"][0]["id"], "same": True}


def test_list_variants_names_what_build_builds(example_build, kernel_builder):
    kernel, summary = example_build
    # list-variants asks the Python first in PATH.
    env = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
    listed = run([kernel_builder, "list-variants", kernel], env=env, check=True).stdout.split()
    assert listed == sorted(variant["name"] for variant in summary["variants"])


def test_the_example_kernels_ci_tests_pass_on_it(cpu_build, kernel_builder):
    kernel, summary = cpu_build
    result = run([kernel_builder, "test", kernel, "--python", PYTHON, "--json", "--variant",
                  summary["variants"][0]["name"]])
    assert result.returncode == 0, result.stderr
    tested = json.loads(result.stdout)
    assert tested["variant"] == summary["variants"][0]["name"]
    assert tested["pytest_status"] == 0


def test_without_tvm_ffi_the_build_names_the_package(kernel_builder, tmp_path):
    # A venv without apache-tvm-ffi: nothing to compile, so this is quick.
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    kernel = copy_example(tmp_path, '["cpu"]')
    result = build(kernel_builder, kernel, tmp_path / "bare" / "bin" / "python")
    assert result.returncode != 0
    assert ("nothing can be built on this machine: cpu: the build's Python cannot import tvm_ffi; "
            "install apache-tvm-ffi there (`pip install apache-tvm-ffi`) or pass --python"
            ) in result.stderr


def test_create_project_writes_the_tvm_ffi_project(kernel_builder, tmp_path):
    kernel = copy_example(tmp_path, '["cpu"]')
    result = run([kernel_builder, "create-project", kernel, "--target", tmp_path / "project",
                  "--unique-id", "abc1234", "--json"], check=True)
    files = json.loads(result.stdout)["files"]
    assert {"CMakeLists.txt", "tvm-ffi-ext/relu_tvm_ffi/_ops.py"} <= set(files)
    cmake = (tmp_path / "project" / "CMakeLists.txt").read_text()
    assert 'set(OPS_NAME "_relu_tvm_ffi_cpu_abc1234")' in cmake
    assert "tvm_ffi_configure_target(kernelhub_tvm_ffi" in cmake
    assert 'OUTPUT_NAME "${OPS_NAME}"' in cmake


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                    reason="needs nvcc")
def test_cuda_variant_is_named_after_nvcc(example_build):
    kernel, summary = example_build
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    release = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                             check=True).stdout.split("release ")[1].split(",")[0]
    major, minor = release.split(".")[:2]
    (built,) = backend_variants(summary, "cuda")
    assert built["name"].startswith("tvm-ffi") and f"-cu{major}{minor}-" in built["name"]
    variant = kernel / "build" / built["name"]
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["backend"] == {"type": "cuda", "archs": ["8.0", "9.0+PTX"]}
    exported = subprocess.run(["nm", "-D", "--defined-only", str(variant / f"{built['id']}.so")],
                              capture_output=True, text=True, check=True).stdout
    assert "__tvm_ffi_relu_cuda" in exported and "__tvm_ffi_relu_cpu" not in exported
    # The reference resolver, on this machine's CUDA torch, accepts the variant (no GPU is
    # needed to decide; loading it would need one).
    accepted = python_json(f"""
import json
from kernels.variants import VariantAccepted, parse_variant, resolve_variant
best, trace = resolve_variant([parse_variant({built["name"]!r})])
print(json.dumps({{"best": best.variant_str if best else None,
                   "accepted": all(isinstance(d, VariantAccepted) for d in trace)}}))
""")
    torch_cuda = python_json("import json, torch; print(json.dumps(torch.version.cuda))")
    if torch_cuda and torch_cuda.split(".")[0] == major:
        if int(torch_cuda.split(".")[1]) >= int(minor):
            assert accepted == {"best": built["name"], "accepted": True}
