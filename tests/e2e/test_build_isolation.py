# SPDX-License-Identifier: Apache-2.0
"""Two kernels whose C++ defines the same globals keep separate state in one process.

examples/same-globals-a and examples/same-globals-b define, under the same names, a
namespace-scope variable, a function-local static of an inline template and a class static
member. Built by `kernel-builder build` and loaded side by side with the REFERENCE loader
(`kernels.get_local_kernel`, backend="cpu"), each must read back its own values: without
hidden visibility or with STB_GNU_UNIQUE symbols the dynamic linker would bind both kernels
to one copy. Two builds of one kernel under different ids are covered by
test_build_cpu.py::test_two_builds_load_side_by_side. The builds are conftest's
`built_example`, shared with test_kernel_test_command.py.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import VENV_BIN

PYTHON = VENV_BIN / "python"
# The globals state.h defines, as they appear (demangled) in a symbol table.
GLOBAL_NAMES = ["same_globals::g_value", "same_globals::Registry::value",
                "same_globals::local_static<long>()::value"]

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)


@pytest.fixture(scope="module")
def pair(built_example):
    built = {}
    for name in ("same-globals-a", "same-globals-b"):
        example = built_example(name)
        [variant] = example.summary["variants"]
        built[name] = (example.kernel, Path(variant["path"]), variant["id"])
    return built


def symbols(library: Path, dynamic: bool):
    flag = "--dyn-syms" if dynamic else "--syms"
    out = subprocess.run(["readelf", "-W", flag, "-C", str(library)], capture_output=True,
                         text=True, check=True).stdout
    return [line.split(None, 7) for line in out.splitlines() if line.strip()[:1].isdigit()]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs binutils' readelf")
def test_globals_are_private_to_each_kernel(pair):
    for kernel_dir, variant, kernel_id in pair.values():
        [library] = variant.glob("*.abi3.so")
        # The globals exist in the library ...
        names = [row[7] for row in symbols(library, dynamic=False) if len(row) == 8]
        for name in GLOBAL_NAMES:
            assert name in names, (library, name)
        # ... but none is exported, and nothing is process-unique (STB_GNU_UNIQUE). What is
        # exported besides PyInit_<id> is typeinfo of torch's types, default-visibility there.
        exported = [row for row in symbols(library, dynamic=True)
                    if len(row) == 8 and row[6] != "UND"]
        assert not [row for row in exported if row[4] == "UNIQUE"], exported
        exported_names = [row[7] for row in exported]
        assert f"PyInit_{kernel_id}" in exported_names
        assert not [name for name in exported_names if name.startswith("same_globals::")]


def test_pair_keeps_separate_state_in_one_process(pair):
    (dir_a, _, id_a), (dir_b, _, id_b) = pair["same-globals-a"], pair["same-globals-b"]
    assert id_a != id_b
    script = f"""
import json, pathlib, kernels
a = kernels.get_local_kernel(pathlib.Path({str(dir_a)!r}), backend="cpu")
b = kernels.get_local_kernel(pathlib.Path({str(dir_b)!r}), backend="cpu")
a.set_values(1, 2, 3)
b.set_values(10, 20, 30)
after_b = a.get_values()
a.set_values(4, 5, 6)
print(json.dumps({{"a": a.get_values(), "b": b.get_values(), "a_after_b": after_b,
                  "namespaces": [a.ops.name, b.ops.name]}}))
"""
    result = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values == {"a": [4, 5, 6], "b": [10, 20, 30], "a_after_b": [1, 2, 3],
                      "namespaces": [id_a, id_b]}


@pytest.mark.parametrize("name", ["same-globals-a", "same-globals-b"])
def test_example_tests_pass_against_the_built_variant(pair, name, tmp_path):
    # What `kernel-builder test` does: the variant importable under the kernel's Python name,
    # then pytest on the kernel's own tests marked kernels_ci.
    kernel_dir, variant, _ = pair[name]
    (tmp_path / name.replace("-", "_")).symlink_to(variant, target_is_directory=True)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = subprocess.run([str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-m", "kernels_ci", "-W", "ignore::pytest.PytestUnknownMarkWarning",
                             str(kernel_dir / "tests")],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
