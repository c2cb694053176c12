# SPDX-License-Identifier: Apache-2.0
"""`import kernelhub` (issue 25): what a load does not need is imported on first use. The
modules that define the layer API, Metadata, the lock files' and the variant decisions'
classes cost about 8 of the package's 15 ms to import (they define dataclasses and enums by
running code); every public name still resolves, from the package and by `from ... import`."""
import json
import subprocess

from conftest import VENV_BIN

PYTHON = VENV_BIN / "python"
DEFERRED = {"kernelhub.layer", "kernelhub._metadata", "kernelhub._locks", "kernelhub._variants",
            "kernelhub.benchmark"}


def run_python(code: str) -> dict:
    result = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_the_package_defers_what_a_load_does_not_need():
    out = run_python(
        "import json, sys, kernelhub\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('kernelhub'))))")
    assert "kernelhub._kernelhub" in out and "kernelhub._hub" in out
    assert not DEFERRED & set(out), sorted(DEFERRED & set(out))
    assert "torch" not in out


def test_every_public_name_resolves_as_before():
    out = run_python(
        "import json, sys, kernelhub\n"
        "missing = [n for n in kernelhub.__all__ if not hasattr(kernelhub, n)]\n"
        "from kernelhub import kernelize, Metadata, LayerRepository, VariantAccepted, Benchmark\n"
        "import kernelhub.layer as layer\n"
        "print(json.dumps({'missing': missing, 'dir': sorted(set(kernelhub.__all__) - set(dir(kernelhub))),\n"
        "  'same': [kernelhub.kernelize is layer.kernelize is kernelize,\n"
        "           kernelhub.Metadata is Metadata, kernelhub.layer is layer,\n"
        "           kernelhub.LayerRepository is layer.LayerRepository],\n"
        "  'unknown': not hasattr(kernelhub, 'no_such_name')}))")
    assert out == {"missing": [], "dir": [], "same": [True] * 4, "unknown": True}


def test_a_submodule_the_package_imported_before_is_still_an_attribute():
    # `import kernelhub; kernelhub.layer.kernelize` worked when the package imported the layer
    # module itself; it works now that it is imported on first use.
    out = run_python("import json, kernelhub\n"
                     "print(json.dumps([kernelhub.layer.kernelize.__name__,\n"
                     "                  kernelhub.benchmark.Benchmark.__name__]))")
    assert out == ["kernelize", "Benchmark"]
