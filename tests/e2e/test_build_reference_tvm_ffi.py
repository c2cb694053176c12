# SPDX-License-Identifier: Apache-2.0
"""The reference's example relu-tvm-ffi (its own build.toml, our sources in its layout,
examples/relu-tvm-ffi-reference) builds with every check on and passes its tests, cpu backend
(the build is conftest's `built_example`, every backend this machine builds, shared with
test_kernel_test_command.py; the cpu variant is the one tested here).

Its Python package takes `has_jax` from the generated `_ops` (a find_spec check), registers a
JAX FFI target under `if has_jax:` and imports jax in `relu_jax` after raising without it. The
import check used to refuse both jax imports (issue 13 item 5): they are optional, and `-v`
says so. The reference loader then loads the variant on this machine (no JAX here or there).
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import CORPUS_DIR, REPO_ROOT, VENV_BIN, run
from layers_support import venv_has_tvm_ffi

PYTHON = VENV_BIN / "python"
EXAMPLE = REPO_ROOT / "examples" / "relu-tvm-ffi-reference"


pytestmark = pytest.mark.skipif(
    not venv_has_tvm_ffi() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch and apache-tvm-ffi (requirements-dev.txt), cmake, ninja",
)


def test_the_example_uses_the_reference_build_toml():
    ours = (EXAMPLE / "build.toml").read_text()
    assert ours.endswith((CORPUS_DIR / "relu-tvm-ffi.toml").read_text())


def test_its_jax_imports_pass_the_import_check_as_optional(kernel_builder):
    quiet = run([kernel_builder, "check-imports", EXAMPLE])
    assert quiet.returncode == 0, quiet.stderr
    assert "error" not in quiet.stderr
    verbose = run([kernel_builder, "check-imports", EXAMPLE, "-v"])
    assert verbose.returncode == 0, verbose.stderr
    init = "tvm-ffi-ext/relu_tvm_ffi/__init__.py"
    assert re.search(re.escape(init) + r':\d+:5: note: optional import of "jax_tvm_ffi" allowed: '
                     r'it is under a condition on "has_jax"', verbose.stderr), verbose.stderr
    assert re.search(re.escape(init) + r':\d+:5: note: optional import of "jax" allowed: it is '
                     r'after an early exit on "has_jax"', verbose.stderr), verbose.stderr


@pytest.fixture(scope="module")
def built(built_example):
    """The example built with the checks on (source checks, check-abi and the reference
    loader's load check) and -v, which shows the import check's notes."""
    example = built_example(EXAMPLE.name)
    return example.kernel, example.result


def cpu_variant(result):
    [variant] = [v for v in json.loads(result.stdout)["variants"] if v["backend"] == "cpu"]
    return variant


def test_builds_with_the_checks_on(built):
    kernel, result = built
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert sorted(v["name"] for v in summary["variants"]) == sorted(
        n.name for n in (kernel / "build").iterdir() if n.name.startswith("tvm-ffi"))
    variant = cpu_variant(result)
    assert re.fullmatch(r"tvm-ffi\d+-cpu-\w+-linux", variant["name"]), variant["name"]
    assert summary["failed"] == []
    assert "load check passed" in result.stderr
    assert 'optional import of "jax_tvm_ffi" allowed' in result.stderr
    assert ": error:" not in result.stderr


def test_its_tests_pass(built, kernel_builder):
    kernel, result = built
    assert result.returncode == 0, result.stderr
    cpu = cpu_variant(result)["name"]
    tested = run([kernel_builder, "test", kernel, "--python", PYTHON, "--json", "--variant", cpu])
    assert tested.returncode == 0, tested.stdout + tested.stderr
    report = json.loads(tested.stdout)
    assert report["pytest_status"] == 0 and report["passed"] is True
    assert report["variant"] == cpu
    # Every kernels_ci test ran: numpy's only where numpy is installed.
    counts = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|skipped|failed)",
                                                           tested.stderr))
    assert counts.get("failed", 0) == 0
    assert counts.get("passed", 0) + counts.get("skipped", 0) == 9, tested.stderr
    assert counts.get("passed", 0) >= 8, tested.stderr


def test_the_reference_loader_runs_it_without_jax(built):
    kernel, result = built
    assert result.returncode == 0, result.stderr
    script = f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel)!r}), backend="cpu")
x = torch.randn(40, 31)
out = torch.empty_like(x)
same = k.relu(x, out) is out and torch.equal(out, torch.relu(x))
layer = torch.equal(k.layers.ReLU()(x), torch.relu(x))
try:
    k.relu_jax(x)
    jax = "ran"
except RuntimeError as error:
    jax = str(error)
print(json.dumps({{"same": same, "layer": layer, "has_jax": bool(k._ops.has_jax), "jax": jax}}))
"""
    env = dict(os.environ)
    loaded = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=300, env=env)
    assert loaded.returncode == 0, loaded.stderr
    answer = json.loads(loaded.stdout.strip().splitlines()[-1])
    has_jax = answer.pop("has_jax")
    assert answer["same"] and answer["layer"]
    if not has_jax:
        assert answer["jax"] == "relu_jax needs jax and jax_tvm_ffi, which are not installed"
