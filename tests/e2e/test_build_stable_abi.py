# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build` of a Torch stable-ABI kernel (examples/relu-stable-abi).

One build (about a minute; conftest's `built_example`, shared with test_kernel_test_command.py):
the variant is named torch-stable-abi211-cpu-<system>, compiled with TORCH_TARGET_VERSION for
2.11, passes check-abi's torch stable-ABI rule at 2.11, and the REFERENCE loader
`kernels.get_local_kernel` loads it under the venv's newer torch and its relu matches
torch.relu.
"""
import json
import platform
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, VENV_BIN, example_unique_id, run

PYTHON = VENV_BIN / "python"
EXAMPLE = REPO_ROOT / "examples" / "relu-stable-abi"
VARIANT = f"torch-stable-abi211-cpu-{platform.machine()}-linux"
KERNEL_ID = f"_relu_stable_abi_cpu_{example_unique_id(EXAMPLE.name)}"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None
    or platform.system() != "Linux",
    reason="needs Linux and the .venv with torch, cmake and ninja",
)


@pytest.fixture(scope="module")
def built(built_example):
    example = built_example(EXAMPLE.name)
    return example.kernel, example.summary, example.result.stderr


def test_builds_the_stable_abi_variant(built):
    kernel_dir, summary, stderr = built
    assert [v["name"] for v in summary["variants"]] == [VARIANT]
    assert summary["skipped"] == []
    assert "ABI violation" not in stderr
    variant = kernel_dir / "build" / VARIANT
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["id"] == KERNEL_ID
    assert (variant / f"{KERNEL_ID}.abi3.so").is_file()
    project = kernel_dir / "build" / ".kernelhub" / VARIANT / "project" / "CMakeLists.txt"
    assert "TORCH_TARGET_VERSION=0x020b000000000000" in project.read_text()


def test_check_abi_stable_rule_passes_at_the_target(built, kernel_builder):
    """The reference's kernel_abi_check Python package has no stable-ABI rule; its
    kernel-builder runs the Rust one, which our check-abi mirrors (test_check_abi.py)."""
    kernel_dir, _, _ = built
    ours = run([kernel_builder, "check-abi", kernel_dir / "build" / VARIANT,
                "--torch-stable-abi", "2.11"])
    assert ours.returncode == 0, ours.stdout + ours.stderr


def test_the_rule_flags_a_target_older_than_the_shims_used(built, kernel_builder):
    """The build targets 2.11 and uses shims from 2.10 (torch_library_impl) and 2.11 (the
    dtype getters), so a 2.9 target must be refused."""
    kernel_dir, _, _ = built
    result = run([kernel_builder, "check-abi", kernel_dir / "build" / VARIANT,
                  "--torch-stable-abi", "2.9"])
    assert result.returncode != 0
    assert "torch_library_impl" in result.stdout + result.stderr
    assert "only since 2.11" in result.stdout + result.stderr


def test_reference_loader_runs_it_under_a_newer_torch(built):
    kernel_dir, _, _ = built
    script = f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel_dir)!r}), backend="cpu")
x = torch.randn(33, 1000, dtype=torch.float64)
print(json.dumps({{"equal": torch.equal(k.relu(x), torch.relu(x)),
                   "torch": torch.__version__, "ops": k.ops.name}}))
"""
    result = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["equal"]
    assert out["ops"] == KERNEL_ID


def test_an_older_torch_is_refused(kernel_builder, tmp_path):
    kernel_dir = tmp_path / "relu-stable-abi"
    shutil.copytree(EXAMPLE, kernel_dir, ignore=shutil.ignore_patterns("build", "__pycache__"))
    toml = kernel_dir / "build.toml"
    toml.write_text(toml.read_text().replace('cpu = "2.11"', 'cpu = "9.1"'))
    result = run([kernel_builder, "build", kernel_dir, "--python", PYTHON])
    assert result.returncode != 0
    assert "is older than the stable ABI version \"9.1\" it would target" in result.stderr
