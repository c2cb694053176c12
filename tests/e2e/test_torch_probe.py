# SPDX-License-Identifier: Apache-2.0
"""kernel-builder's torch probe (builder/torch_environment.cpp) reads torch's files instead of
importing it: `import torch` costs seconds of CPU, and the probe runs for every new interpreter
or torch a build meets. What it reads must be what importing torch says: compared here with
the .venv's torch, and with small fake torch packages for the layouts this machine lacks (an
old-ABI libc10, no libc10 at all, no torch)."""
import json
import platform
import subprocess
import sysconfig

import pytest

from conftest import VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")

# Fails the script if torch was imported by it: appended after its last line.
NOT_IMPORTED = "\nimport sys\nassert 'torch' not in sys.modules, 'the probe imported torch'\n"


@pytest.fixture(scope="module")
def script(testtool):
    return json.loads(run([testtool, "torch-probe-script"], check=True).stdout)["script"]


def probe(script, *python_args, pythonpath=None):
    env = {"PATH": "/usr/bin:/bin"}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([str(PYTHON), *python_args, "-c", script], capture_output=True,
                          text=True, env=env, timeout=300)


def facts(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[0])


def test_it_says_what_importing_torch_says_without_importing_it(script):
    read = facts(probe(script + NOT_IMPORTED))
    imported = json.loads(subprocess.run(
        [str(PYTHON), "-c",
         "import json, torch, torch.utils\n"
         "print(json.dumps({'torch': torch.__version__,\n"
         "  'cxx11_abi': bool(torch._C._GLIBCXX_USE_CXX11_ABI), 'cuda': torch.version.cuda,\n"
         "  'hip': torch.version.hip, 'cmake_prefix_path': torch.utils.cmake_prefix_path}))"],
        capture_output=True, text=True, check=True, timeout=300).stdout)
    assert {key: read[key] for key in imported} == imported
    assert read["machine"] == platform.machine()
    assert read["system"] == platform.system().lower()
    assert read["python_include"] == sysconfig.get_paths()["include"]  # pytest runs in the .venv


def fake_torch(site, *, version_py=None, libc10=None, init="raise RuntimeError('imported')\n"):
    package = site / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(init)
    if version_py is not None:
        (package / "version.py").write_text(version_py)
    if libc10 is not None:
        (package / "lib").mkdir()
        (package / "lib" / "libc10.so").write_bytes(libc10)
    return package


VERSION_PY = ("from typing import Optional\n__version__ = '2.13.1+cu128'\ndebug = False\n"
              "cuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n")


def test_the_new_abi_from_libc10s_symbols(script, tmp_path):
    package = fake_torch(tmp_path, version_py=VERSION_PY,
                         libc10=b"\x7fELF...\0_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcE\0")
    read = facts(probe(script, pythonpath=tmp_path))  # __init__ raises if imported
    assert read["torch"] == "2.13.1+cu128"
    assert read["cxx11_abi"] is True
    assert (read["cuda"], read["hip"]) == ("12.8", None)
    assert read["cmake_prefix_path"] == str(package / "share" / "cmake")


def test_the_old_abi_where_libc10_names_no_cxx11_string(script, tmp_path):
    fake_torch(tmp_path, version_py=VERSION_PY.replace("2.13.1+cu128", "2.5.1+cu124"),
               libc10=b"\x7fELF...\0_ZNKSs4findEPKcmm\0_ZN3c106detail14torchCheckFailEPKcS2_jRKSs\0")
    read = facts(probe(script, pythonpath=tmp_path))
    assert (read["torch"], read["cxx11_abi"]) == ("2.5.1+cu124", False)


def test_a_torch_laid_out_otherwise_is_imported(script, tmp_path):
    # No lib/libc10.so (a macOS torch has libc10.dylib): torch itself answers.
    package = fake_torch(
        tmp_path, version_py=VERSION_PY,
        init="__version__ = '2.12.0'\nfrom . import version, utils\n"
             "class _C:\n    _GLIBCXX_USE_CXX11_ABI = False\n")
    (package / "utils.py").write_text("cmake_prefix_path = '/from/the/import'\n")
    read = facts(probe(script, pythonpath=tmp_path))
    assert (read["torch"], read["cxx11_abi"], read["cmake_prefix_path"]) == (
        "2.12.0", False, "/from/the/import")


def test_no_torch_or_a_broken_one_fails_the_probe(script, tmp_path):
    # -S: no site-packages, so the .venv's torch is not found either.
    missing = probe(script, "-S")
    assert missing.returncode != 0
    assert "No module named 'torch'" in missing.stderr
    fake_torch(tmp_path, version_py=VERSION_PY)  # no libc10, and its import raises
    broken = probe(script, pythonpath=tmp_path)
    assert broken.returncode != 0
    assert "RuntimeError: imported" in broken.stderr
