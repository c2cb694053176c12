# SPDX-License-Identifier: Apache-2.0
"""The inner loop of a fresh `init` project (issue 22 §1, §3): a kernel folder without a git
commit keeps one development id, so a second build compiles nothing; a new id (the first
commit) recompiles only the sources that embed the ops namespace; a copied folder, build/
included, builds by itself under an id of its own and loads beside the original.

Which objects a build compiled is read from their mtimes (ninja and ccache rewrite an object
they build), never from how long the build took.
"""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None
        or shutil.which("git") is None,
        reason="needs the .venv with torch, cmake, ninja and git"),
]

VARIANT_GLOB = "torch*-cpu-*"


def init_cpu_kernel(kernel_builder, folder):
    run([kernel_builder, "init", "acme/rms-norm", "--backends", "cpu"], cwd=folder, check=True)
    kernel = folder / "rms-norm"
    # `init` makes the git repository and stages the files, but commits nothing.
    head = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=kernel,
                          capture_output=True, text=True)
    assert head.returncode != 0, "the project should start without a commit"
    return kernel


def build(kernel_builder, kernel):
    result = run([kernel_builder, "build", kernel, "--python", PYTHON])
    assert result.returncode == 0, result.stderr
    return result


def kernel_id(kernel):
    variant = next((kernel / "build").glob(VARIANT_GLOB))
    return json.loads((variant / "metadata.json").read_text())["id"]


def objects(kernel):
    """Object file name -> mtime_ns, for the cpu variant's build tree."""
    trees = list((kernel / "build" / ".kernelhub").glob(VARIANT_GLOB + "/cmake"))
    assert len(trees) == 1, trees
    found = {path.name: path.stat().st_mtime_ns for path in trees[0].rglob("*.o")}
    assert "torch_binding.cpp.o" in found and "rms_norm_cpu.cpp.o" in found, found
    return found


def changed(before, after):
    return sorted(name for name in after if before.get(name) != after[name])


def commit(kernel):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit",
                    "-q", "-m", "first"], cwd=kernel, check=True)


def test_an_uncommitted_kernel_rebuilds_only_what_changed(kernel_builder, tmp_path):
    kernel = init_cpu_kernel(kernel_builder, tmp_path)
    build(kernel_builder, kernel)
    first_id = kernel_id(kernel)
    first = objects(kernel)

    # A no-op build: the same id, nothing compiled.
    again = build(kernel_builder, kernel)
    assert kernel_id(kernel) == first_id
    assert changed(first, objects(kernel)) == []
    assert "load check passed before" in again.stderr

    # One kernel source edited: that object alone.
    source = kernel / "rms_norm_cpu" / "rms_norm_cpu.cpp"
    source.write_text(source.read_text() + "\nint rms_norm_edited() { return 1; }\n")
    edited_before = objects(kernel)
    build(kernel_builder, kernel)
    assert kernel_id(kernel) == first_id
    assert changed(edited_before, objects(kernel)) == ["rms_norm_cpu.cpp.o"]

    # The first commit names the build after the tree: only the source that registers the
    # ops namespace recompiles.
    commit(kernel)
    committed_before = objects(kernel)
    build(kernel_builder, kernel)
    assert kernel_id(kernel) != first_id
    assert changed(committed_before, objects(kernel)) == ["torch_binding.cpp.o"]


def test_a_copied_kernel_folder_builds_and_loads_beside_the_original(kernel_builder, tmp_path):
    kernel = init_cpu_kernel(kernel_builder, tmp_path)
    build(kernel_builder, kernel)
    copy = tmp_path / "copy" / "rms-norm"
    shutil.copytree(kernel, copy, symlinks=True)

    # CMake's cache in the copied build/ names the original folder: the build starts that
    # tree again instead of failing on it.
    result = run([kernel_builder, "build", copy, "--python", PYTHON])
    assert result.returncode == 0, result.stderr
    assert "CMakeCache.txt" not in result.stderr
    assert kernel_id(copy) != kernel_id(kernel)
    # The original's id is unchanged by its copy.
    assert build(kernel_builder, kernel) and kernel_id(kernel) != kernel_id(copy)

    script = (
        "import sys, torch\n"
        "from kernels import get_local_kernel\n"
        "a = get_local_kernel(__import__('pathlib').Path(sys.argv[1]), backend='cpu')\n"
        "b = get_local_kernel(__import__('pathlib').Path(sys.argv[2]), backend='cpu')\n"
        "x = torch.randn(8)\n"
        "assert torch.allclose(a.rms_norm(x), b.rms_norm(x))\n"
        "print(a.ops.name, b.ops.name)\n")
    loaded = run([PYTHON, "-c", script, kernel / "build", copy / "build"])
    assert loaded.returncode == 0, loaded.stderr
    names = loaded.stdout.split()
    assert names == [kernel_id(kernel), kernel_id(copy)], loaded.stdout


def tvm_ffi_objects(kernel):
    """Object path (relative to the cpu variant's build tree) -> mtime_ns."""
    trees = list((kernel / "build" / ".kernelhub").glob("tvm-ffi*-cpu-*/cmake"))
    assert len(trees) == 1, trees
    return {str(path.relative_to(trees[0])): path.stat().st_mtime_ns
            for path in trees[0].rglob("*.o")}


def tvm_ffi_id(kernel):
    variant = next((kernel / "build").glob("tvm-ffi*-cpu-*"))
    return json.loads((variant / "metadata.json").read_text())["id"]


def test_a_tvm_ffi_kernel_recompiles_only_the_source_that_names_its_id(kernel_builder,
                                                                        tmp_path):
    probe = subprocess.run([PYTHON, "-c", "import tvm_ffi"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("apache-tvm-ffi is not installed in the venv")
    kernel = tmp_path / "relu-tvm-ffi"
    shutil.copytree(REPO_ROOT / "examples" / "relu-tvm-ffi", kernel,
                    ignore=shutil.ignore_patterns("build"))
    # The binding says TVM_FFI_EXTENSION_NAME, as reference kernels may; relu_cpu.cpp does not.
    binding = kernel / "tvm-ffi-ext" / "tvm_ffi_binding.cpp"
    binding.write_text(binding.read_text() + (
        "\n#define RELU_STRINGIFY2(x) #x\n#define RELU_STRINGIFY(x) RELU_STRINGIFY2(x)\n"
        "extern \"C\" const char* relu_extension_name() {\n"
        "  return RELU_STRINGIFY(TVM_FFI_EXTENSION_NAME);\n}\n"))
    subprocess.run(["git", "init", "-q"], cwd=kernel, check=True)
    subprocess.run(["git", "add", "-A"], cwd=kernel, check=True)
    argv = [kernel_builder, "build", kernel, "--python", PYTHON, "--variant", "cpu"]
    result = run(argv)
    assert result.returncode == 0, result.stderr
    first_id = tvm_ffi_id(kernel)
    before = tvm_ffi_objects(kernel)

    # The first commit gives the build a new id: only the binding, which embeds it, recompiles.
    commit(kernel)
    result = run(argv)
    assert result.returncode == 0, result.stderr
    assert tvm_ffi_id(kernel) != first_id
    after = tvm_ffi_objects(kernel)
    assert sorted(after) == sorted(before), "object paths must not change with the id"
    assert [Path(name).name for name in changed(before, after)] == ["tvm_ffi_binding.cpp.o"]
