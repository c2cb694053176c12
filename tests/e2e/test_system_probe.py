# SPDX-License-Identifier: Apache-2.0
"""The system probe (python/kernelhub/_system_probe.py) is one file with two uses: the C++
core embeds it and runs it in a child interpreter, the Python package imports it in-process.
Both must say the same, and what they say of tvm-ffi must be what the installed package's
metadata says (the probe reads it without importlib.metadata, for speed)."""
import json
import subprocess

import pytest

from conftest import VENV_BIN

PYTHON = VENV_BIN / "python"


def run_python(code: str) -> str:
    result = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_the_child_and_the_in_process_probe_agree():
    script = run_python("import kernelhub._kernelhub as k; import json; "
                        "print(json.dumps(k.probe_script()))")
    child = json.loads(run_python(json.loads(script)))
    in_process = json.loads(run_python("from kernelhub import _system; "
                                       "print(_system.probe_json())"))
    assert child == in_process
    assert child["machine"] and child["system"]
    assert "torch" in child, "the venv has torch: the probe must see it"


def test_the_tvm_ffi_version_is_the_installed_distributions():
    expected = run_python(
        "import importlib.metadata as m, json\n"
        "try:\n    print(json.dumps(m.version('apache-tvm-ffi')))\n"
        "except m.PackageNotFoundError:\n    print('null')")
    if json.loads(expected) is None:
        pytest.skip("apache-tvm-ffi is not installed")
    probed = json.loads(run_python("from kernelhub import _system; print(_system.probe_json())"))
    assert probed.get("tvm_ffi") == json.loads(expected)
    # and what the reference reads, importing the package
    imported = run_python("import json, tvm_ffi; print(json.dumps(tvm_ffi.__version__))")
    assert probed.get("tvm_ffi") == json.loads(imported)


def test_the_version_comes_from_the_packages_generated_version_file(tmp_path):
    # A tvm_ffi with a setuptools-scm `_version.py` (annotations first, as vcs-versioning
    # writes it) and no dist-info: the probe says what `tvm_ffi.__version__` says.
    package = tmp_path / "tvm_ffi"
    package.mkdir()
    (package / "__init__.py").write_text("from ._version import __version__\n")
    (package / "_version.py").write_text(
        "from __future__ import annotations\n__version__: str\nversion: str\n"
        "__version__ = version = '9.8.1.post3'\n")
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
            "from kernelhub import _system_probe; import json; "
            "probed = _system_probe.probe().get('tvm_ffi'); "
            "assert 'tvm_ffi' not in sys.modules; import tvm_ffi; "
            "print(json.dumps([probed, tvm_ffi.__version__]))")
    probed, imported = json.loads(run_python(code))
    assert probed == imported == "9.8.1.post3"


def test_no_tvm_ffi_is_no_version(tmp_path):
    # A folder first on the path whose tvm_ffi package has no dist-info beside it: the probe
    # says nothing rather than guessing (importlib.metadata would find none either).
    (tmp_path / "tvm_ffi").mkdir()
    (tmp_path / "tvm_ffi" / "__init__.py").write_text("")
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
            "from kernelhub import _system_probe; import json; "
            "print(json.dumps(_system_probe.probe().get('tvm_ffi')))")
    assert json.loads(run_python(code)) is None


def test_the_core_reads_the_probe_alike_as_a_dict_and_as_its_text(tmp_path):
    # The package hands the core the probe's dict (no JSON text made and parsed on a load);
    # the child interpreter's answer arrives as text. Every machine must come out the same.
    kernel = tmp_path / "kernel"
    for name in ("torch215-cxx11-cpu-x86_64-linux", "torch215-cxx11-cu128-x86_64-linux",
                 "torch29-cxx11-cu126-x86_64-linux", "torch215-metal-aarch64-darwin",
                 "torch-universal", "tvm-ffi01-cpu-x86_64-linux"):
        (kernel / name).mkdir(parents=True)
    torch = {"version": "2.15.0", "cxx11": True, "cuda": None, "hip": None, "xpu": None,
             "tpu": False, "neuron": False, "mps": False, "privateuse1": "privateuseone",
             "cann": None}
    base = {"executable": "/usr/bin/python3", "machine": "x86_64", "system": "Linux",
            "mac_ver": "", "free_threaded": False, "tvm_ffi": "0.1.15.post2"}
    probes = [
        dict(base, torch=torch),
        dict(base, torch=dict(torch, cuda="12.8", device=False)),
        dict(base, torch=dict(torch, cuda="12.8", device=True)),
        dict(base, torch=dict(torch, version="2.9.1", cuda="12.6")),
        dict(base, machine="arm64", system="Darwin", mac_ver="15.1", torch=dict(torch, mps=True)),
        dict(base, cudart="12.8"),
        dict(base, free_threaded=True, torch=torch),
    ]
    code = f"""
import json
from kernelhub import _kernelhub as k
out = []
for probe in json.loads({json.dumps(json.dumps(probes))}):
    answers = []
    for given in (probe, json.dumps(probe)):
        try:
            path, trace, text = k.find_local_variant({str(kernel)!r}, given)
            answers.append([str(path), trace, text, k.system_backend(given)])
        except FileNotFoundError as error:
            answers.append(["none", str(error), k.system_backend(given)])
    out.append(answers)
try:
    k.system_backend(dict(json.loads({json.dumps(json.dumps(probes[0]))}), extra={{1, 2}}))
    out.append("accepted a set")
except TypeError as error:
    out.append(str(error))
print(json.dumps(out))
"""
    results = json.loads(run_python(code))
    refusal = results.pop()
    assert "not JSON" in refusal and "set" in refusal, refusal
    assert len(results) == len(probes)
    chosen = set()
    for as_dict, as_text in results:
        assert as_dict == as_text
        chosen.add(as_dict[0])
    assert len(chosen) >= 4, chosen  # the probes differ where it matters
