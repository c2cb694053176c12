# SPDX-License-Identifier: Apache-2.0
"""What the load check tells a kernel author (issue 22 §2 and §7), on a fresh `init --backends
cpu` project, as an author trips over it:

- a schema typo (`Tensr input`) and a schema/signature mismatch: the build's summary line
  carries the whole C++ message (the parse error's schema and caret; the operator, both
  schemas and the reason), without -v and without the C++ frames;
- `TORCH_LIBRARY(rms_norm, ops)` built with --skip-checks loads, but its ops are not in the
  build's namespace that the package's `ops` refers to: check-load fails and says where they
  went, and check-ops' hint says what really happens.

Each case compiles the init template's cpu kernel once (ccache keeps reruns short).
"""
import json
import shutil

import pytest

from conftest import VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja")


@pytest.fixture(scope="module")
def template(kernel_builder, tmp_path_factory):
    root = tmp_path_factory.mktemp("template")
    run([kernel_builder, "init", "--backends", "cpu", "--name", "acme/rms_norm",
         root / "rms-norm"], check=True)
    return root / "rms-norm"


def project(template, tmp_path, old, new):
    kernel = tmp_path / "rms-norm"
    shutil.copytree(template, kernel)
    binding = kernel / "torch-ext" / "torch_binding.cpp"
    source = binding.read_text()
    assert old in source
    binding.write_text(source.replace(old, new))
    return kernel


def build(kernel_builder, kernel, *args):
    return run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id", "fixed",
                *args], env={"CCACHE_BASEDIR": str(kernel)})


def test_a_schema_typo_shows_the_parse_error(kernel_builder, template, tmp_path):
    kernel = project(template, tmp_path, "Tensor input", "Tensr input")
    result = build(kernel_builder, kernel)
    assert result.returncode == 1
    # The summary line, then the schema and the caret under the typo, each indented alike.
    assert ("kernels.get_local_kernel cannot load it: torch::jit::ErrorReport: unknown type "
            "specifier.") in result.stderr
    assert "\n  rms_norm(Tensor! out, Tensr input) -> ()\n" in result.stderr
    lines = result.stderr.splitlines()
    schema = next(i for i, line in enumerate(lines) if "Tensr input) -> ()" in line)
    assert lines[schema + 1].index("~~~~~ <--- HERE") == lines[schema].index("Tensr")
    assert "frame #" not in result.stderr


def test_a_signature_mismatch_names_the_operator_schemas_and_reason(kernel_builder, template,
                                                                    tmp_path):
    kernel = project(template, tmp_path, "Tensor input) -> ()",
                     "Tensor input, float eps) -> ()")
    result = build(kernel_builder, kernel, "--json")
    assert result.returncode == 1
    assert "doesn't match the expected function schema.\n" in result.stderr
    for detail in ("operator: _rms_norm_cpu_fixed::rms_norm",
                   "expected schema: _rms_norm_cpu_fixed::rms_norm(Tensor($0! -> ) out, "
                   "Tensor input, float eps) -> ()",
                   "inferred schema: (Tensor _0, Tensor _1) -> ()",
                   "reason: The number of arguments is different. 3 vs 2."):
        assert f"\n    {detail}\n" in result.stderr, detail
    assert "frame #" not in result.stderr and "Exception raised from" not in result.stderr
    [failed] = json.loads(result.stdout)["failed"]
    assert "\n  reason: The number of arguments is different. 3 vs 2." in failed["error"]

    # check-load gives the same message; its JSON carries it whole.
    aside = kernel / "build" / ".kernelhub" / failed["name"] / "failed"
    checked = run([kernel_builder, "check-load", aside, "--python", PYTHON, "--json"])
    [entry] = json.loads(checked.stdout)["variants"]
    assert entry["error"] == failed["error"]


@pytest.fixture(scope="module")
def fixed_namespace(kernel_builder, template, tmp_path_factory):
    """`TORCH_LIBRARY(rms_norm, ops)` built with --skip-checks: it compiles and loads."""
    kernel = project(template, tmp_path_factory.mktemp("fixed"),
                     "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)",
                     "TORCH_LIBRARY(rms_norm, ops)")
    result = build(kernel_builder, kernel, "--skip-checks", "--json")
    assert result.returncode == 0, result.stderr
    [variant] = json.loads(result.stdout)["variants"]
    return kernel, variant["name"]


def test_check_load_fails_when_the_ops_are_not_in_the_builds_namespace(kernel_builder,
                                                                      fixed_namespace):
    kernel, name = fixed_namespace
    # What the author saw: the package's ops namespace is empty.
    probe = run([PYTHON, "-c", "import sys, kernels\n"
                 "k = kernels.get_local_kernel(__import__('pathlib').Path(sys.argv[1]))\n"
                 "k.rms_norm(__import__('torch').ones(3))", kernel / "build" / name])
    assert "has no attribute 'rms_norm'" in probe.stderr

    result = run([kernel_builder, "check-load", kernel, "--python", PYTHON])
    assert result.returncode == 1
    assert "the kernel's ops are not in its build's namespace: this load registered " \
        "rms_norm::rms_norm, and torch.ops._rms_norm_cpu_fixed (the package's `ops`" \
        in result.stderr
    assert "\n  register them with TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)" \
        in result.stderr

    # check-ops says what happens instead of an abort that does not happen.
    ops = run([kernel_builder, "check-ops", kernel])
    assert ops.returncode == 1
    assert "aborts" not in ops.stderr
    assert "its ops land in torch.ops.rms_norm instead of the build's namespace" in ops.stderr
    assert "raises AttributeError" in ops.stderr


def test_check_builds_knows_what_this_machine_builds_and_how_to_build_the_rest(kernel_builder,
                                                                               fixed_namespace):
    kernel, name = fixed_namespace
    listed = run([kernel_builder, "list-variants", kernel], check=True).stdout.split()
    assert listed == [name]
    result = run([kernel_builder, "check-builds", kernel, "--json"])
    report = json.loads(result.stdout)
    matrix = run([kernel_builder, "list-variants", kernel, "--all", "--json"], check=True)
    systems = json.loads(matrix.stdout)["systems"]
    if name in report["expected"]:
        pytest.skip(f"this machine's torch builds {name}, which is in the compliance matrix")
    assert report["unexpected"] == []
    assert report["built_here"] == [name]
    # Every missing variant comes with a command, and the --torch lists are the variants'.
    commanded = [v for command in report["build_commands"] for v in command["variants"]]
    assert sorted(commanded) == sorted(report["missing"])
    system = name.split("-", 3)[3]  # torch215-cxx11-cpu-x86_64-linux: x86_64-linux
    local = [v for s in systems if s["system"] == system for v in s["variants"]]
    torches = ",".join(dict.fromkeys(v["torch"] for v in local))
    assert {"where": "here", "command": f"kernel-builder build {kernel} --torch {torches}",
            "variants": [v["name"] for v in local]} in report["build_commands"]
    text = run([kernel_builder, "check-builds", kernel])
    assert f"built here, outside the compliance matrix (1, by this machine's torch" \
        in text.stdout
    assert f"  here: kernel-builder build {kernel} --torch {torches}\n" in text.stdout
    assert "unexpected" not in text.stdout
