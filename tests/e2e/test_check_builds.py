# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder check-builds` (issue 13 item 13): which variants of the compliance matrix
(what `list-variants --all` gives) build/ lacks, which folders are unexpected, and, as the
reference's check-builds, that each variant folder has a metadata.json that reads."""
import json
import shutil

from conftest import REPO_ROOT, VENV_BIN, run
from test_build_variant import noarch_kernel

PYTHON = VENV_BIN / "python"


def check(kernel_builder, kernel, *extra):
    return run([kernel_builder, "check-builds", kernel, *extra])


def test_a_partial_build_names_what_is_missing_and_exits_1(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    run([kernel_builder, "build", kernel, "--variant", "torch-cpu", "--skip-checks",
         "--python", PYTHON], check=True)
    result = check(kernel_builder, kernel, "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["expected"] == ["torch-cpu", "torch-cuda"]
    assert report["present"] == ["torch-cpu"]
    assert report["missing"] == ["torch-cuda"]
    assert report["unexpected"] == [] and report["invalid"] == [] and report["ok"] is False
    text = check(kernel_builder, kernel)
    assert text.returncode == 1
    assert "1 of 2 variant(s) of the compliance matrix built" in text.stdout
    assert "missing (1):\n  torch-cuda\n" in text.stdout


def test_a_complete_build_passes_and_unexpected_folders_are_named(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    run([kernel_builder, "build", kernel, "--skip-checks", "--python", PYTHON], check=True)
    shutil.copytree(kernel / "build" / "torch-cpu", kernel / "build" / "torch-rocm")
    result = check(kernel_builder, kernel, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["missing"] == [] and report["ok"] is True
    assert report["unexpected"] == ["torch-rocm"]
    text = check(kernel_builder, kernel)
    assert "unexpected (1, no system builds them from this build.toml):\n  torch-rocm\n" \
        in text.stdout


def test_a_variant_without_readable_metadata_fails(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    run([kernel_builder, "build", kernel, "--skip-checks", "--python", PYTHON], check=True)
    (kernel / "build" / "torch-cpu" / "metadata.json").write_text("{not json")
    (kernel / "build" / "torch-cuda" / "metadata.json").unlink()  # half-built: no variant
    result = check(kernel_builder, kernel, "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert [entry["variant"] for entry in report["invalid"]] == ["torch-cpu"]
    assert report["missing"] == ["torch-cuda"]
    text = check(kernel_builder, kernel)
    assert "kernel-builder: error: torch-cpu: " in text.stderr


def test_expected_variants_are_list_variants_all(kernel_builder, tmp_path):
    """The arch kernel examples/relu: the matrix's cpu and cuda variants on every system."""
    kernel = tmp_path / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel,
                    ignore=shutil.ignore_patterns("build"))
    listed = run([kernel_builder, "list-variants", kernel, "--all"], check=True).stdout.split()
    result = check(kernel_builder, kernel, "--json")
    assert result.returncode == 1  # nothing built
    report = json.loads(result.stdout)
    assert report["expected"] == listed and len(listed) > 2
    assert report["missing"] == listed and report["present"] == []
