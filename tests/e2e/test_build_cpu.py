# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build` for cpu and noarch kernels, loaded by the REFERENCE loader.

Each compiled build costs about a minute on a small machine, so there are three: the `init`
starter kernel, and the relu example built twice under different ids (loaded side by side).
The variants are loaded with `kernels.get_local_kernel` (kernels 0.17.2) in a subprocess,
with backend="cpu" because the loader picks CPU arch variants only when asked on a machine
whose torch has CUDA.
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run
from conftest import venv_cpu_variant as torch_variant

PYTHON = VENV_BIN / "python"
EXAMPLES = REPO_ROOT / "examples"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)


def build(kernel_builder, kernel_dir, *args):
    result = run([kernel_builder, "build", kernel_dir, "--python", PYTHON, "--json", *args],
                 check=True)
    return json.loads(result.stdout)


def cpu_only(kernel_dir):
    """The relu example has a cuda kernel too (tests/e2e/test_build_cuda.py builds it)."""
    toml = kernel_dir / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))


def load_and_run(script):
    """Runs `script` in the venv's Python (the reference `kernels` package is there)."""
    result = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def assert_reference_reads(variant: Path):
    """kernels_data reads our metadata.json, and its own hash of the files matches our digest."""
    import kernels_data as kd

    metadata = kd.Metadata.from_bytes((variant / "metadata.json").read_bytes())
    ours = json.loads((variant / "metadata.json").read_text())
    assert metadata.id == ours["id"]
    assert str(metadata.backend.backend_type) == ours["backend"]["type"]
    metadata.digest.validate(kd.Digest.hash_variant(kd.DigestAlgorithm.SHA256, variant))


@pytest.fixture(scope="module")
def init_kernel(kernel_builder, tmp_path_factory):
    root = tmp_path_factory.mktemp("init")
    run([kernel_builder, "init", "--name", "me/silu-cpu", "--backends", "cpu"], cwd=root,
        check=True)
    kernel_dir = root / "silu-cpu"
    return kernel_dir, build(kernel_builder, kernel_dir)


def test_init_kernel_builds_a_cpu_variant(init_kernel):
    kernel_dir, summary = init_kernel
    assert [v["name"] for v in summary["variants"]] == [torch_variant()]
    # Freshly init'ed: files staged, nothing committed, so the id is the folder's development
    # id: "dev" and 10 random base32 characters, kept in build/.kernelhub/dev-id.json.
    assert re.fullmatch(r"dev[a-z2-7]{10}", summary["unique_id"])
    recorded = json.loads((kernel_dir / "build" / ".kernelhub" / "dev-id.json").read_text())
    assert recorded["unique_id"] == summary["unique_id"]
    variant = kernel_dir / "build" / torch_variant()
    kernel_id = summary["variants"][0]["id"]
    assert kernel_id == f"_silu_cpu_cpu_{summary['unique_id']}"
    names = sorted(p.name for p in variant.iterdir())
    assert names == sorted(["__init__.py", "_ops.py", f"{kernel_id}.abi3.so", "layers.py",
                            "metadata.json"])
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["id"] == kernel_id
    assert metadata["backend"] == {"type": "cpu"}
    assert set(metadata["digest"]["files"]) == {"__init__.py", "_ops.py", f"{kernel_id}.abi3.so",
                                                "layers.py"}
    assert not list((kernel_dir / "build").glob(".*tmp*")), "no staging folder is left behind"
    assert_reference_reads(variant)


def test_cpu_variant_needs_no_cuda_library(init_kernel):
    """The venv's torch is a CUDA build, and torch's CMake package would link a CPU extension
    against libtorch_cuda.so as well; a CPU-only torch lacks it, so the cpu variant must name
    only torch's CPU libraries (as the reference's cpu builds, made with a CPU torch, do)."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    kernel_dir, summary = init_kernel
    [module] = (kernel_dir / "build" / torch_variant()).glob("*.abi3.so")
    with module.open("rb") as stream:
        needed = {tag.needed for section in ELFFile(stream).iter_sections()
                  if isinstance(section, DynamicSection)
                  for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"}
    assert {"libc10.so", "libtorch_cpu.so"} <= needed
    assert not [name for name in needed if "cuda" in name or "cudart" in name], needed


def test_reference_loader_runs_the_init_kernel(init_kernel):
    kernel_dir, _ = init_kernel
    result = load_and_run(f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel_dir)!r}), backend="cpu")
x = torch.randn(1000)
print(json.dumps({{"close": torch.allclose(k.silu_cpu(x), torch.nn.functional.silu(x),
                                              atol=1e-6)}}))
""")
    assert result == {"close": True}


def test_skipped_backends_are_named(kernel_builder, tmp_path):
    shutil.copytree(EXAMPLES / "relu", tmp_path / "relu")
    toml = tmp_path / "relu" / "build.toml"
    # A metal kernel of its own: without one, metal would be built as noarch torch-metal.
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["metal"]')
                    + '\n[kernel.relu_metal]\nbackend = "metal"\ndepends = ["torch"]\n'
                      'src = ["relu_metal/relu.mm"]\n')
    (tmp_path / "relu" / "relu_metal").mkdir()
    (tmp_path / "relu" / "relu_metal" / "relu.mm").write_text("// never compiled on linux\n")
    result = run([kernel_builder, "build", tmp_path / "relu", "--python", PYTHON])
    assert result.returncode != 0
    assert ("nothing can be built on this machine: metal: metal kernels build only on macOS, "
            "this machine runs linux") in result.stderr


def test_two_builds_load_side_by_side(kernel_builder, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(EXAMPLES / "relu", a, ignore=shutil.ignore_patterns("build"))
    shutil.copytree(EXAMPLES / "relu", b, ignore=shutil.ignore_patterns("build"))
    cpu_only(a)
    cpu_only(b)
    # a: a git checkout, so its id is the first 7 hex digits of HEAD's tree.
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q", str(a)], check=True)
    subprocess.run([*git, "-C", str(a), "add", "."], check=True)
    subprocess.run([*git, "-C", str(a), "commit", "-qm", "relu"], check=True)
    tree = subprocess.run(["git", "-C", str(a), "rev-parse", "HEAD^{tree}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    summary_a = build(kernel_builder, a)
    summary_b = build(kernel_builder, b, "--unique-id", "second")
    assert summary_a["unique_id"] == tree[:7]
    assert summary_b["unique_id"] == "second"
    metadata_a = json.loads((a / "build" / torch_variant() / "metadata.json").read_text())
    head = subprocess.run(["git", "-C", str(a), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert metadata_a["provenance"]["kernel"] == {"commit": head, "dirty": False}

    result = load_and_run(f"""
import json, pathlib, torch, kernels
ka = kernels.get_local_kernel(pathlib.Path({str(a)!r}), backend="cpu")
kb = kernels.get_local_kernel(pathlib.Path({str(b)!r}), backend="cpu")
x = torch.randn(4096)
print(json.dumps({{
    "a": torch.equal(ka.relu(x), torch.relu(x)),
    "b": torch.equal(kb.relu(x), torch.relu(x)),
    "namespaces": [ka.ops.name, kb.ops.name],
}}))
""")
    assert result["a"] and result["b"]
    assert result["namespaces"] == [f"_relu_cpu_{tree[:7]}", "_relu_cpu_second"]


def test_noarch_example_builds_every_backend_and_loads(kernel_builder, tmp_path):
    kernel_dir = tmp_path / "silu-and-mul"
    shutil.copytree(EXAMPLES / "silu-and-mul", kernel_dir, ignore=shutil.ignore_patterns("build"))
    summary = build(kernel_builder, kernel_dir, "--unique-id", "abc1234")
    assert [v["name"] for v in summary["variants"]] == ["torch-cpu", "torch-cuda"]
    assert summary["skipped"] == []
    for name in ("torch-cpu", "torch-cuda"):
        assert_reference_reads(kernel_dir / "build" / name)
    result = load_and_run(f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel_dir)!r}), backend="cpu")
x = torch.randn(8, 16)
expected = torch.nn.functional.silu(x[:, :8]) * x[:, 8:]
print(json.dumps({{"close": torch.allclose(k.silu_and_mul(x), expected)}}))
""")
    assert result == {"close": True}
