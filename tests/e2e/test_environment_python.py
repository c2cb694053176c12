# SPDX-License-Identifier: Apache-2.0
"""The programs ask the Python of the environment they are installed in (issue 13 item 7).

`.venv/bin/kernelhub download ...` run by its full path used the first python3 on PATH, so
with another Python first (or none) it chose variants as for a machine without torch and said
`Torch version (2.15) does not match environment Torch version (None)`. Now the python3 beside
the program is asked first, `--python` picks another, and a note names the interpreter when
none answered or it has no torch.
"""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO_ROOT, VENV_BIN, run, venv_torch

PYTHON = VENV_BIN / "python"
SITE_PACKAGES = venv_torch().get("site_packages", "")

pytestmark = pytest.mark.skipif(not SITE_PACKAGES or sys.platform != "linux",
                                reason="needs Linux and the .venv with torch")


@pytest.fixture(scope="module")
def installed(kernel_builder, kernelhub_bin, tmp_path_factory):
    """A virtual environment that sees the venv's torch, with both programs copied into it."""
    env = tmp_path_factory.mktemp("env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True,
                   timeout=120)
    [site] = list((env / "lib").glob("python3*/site-packages"))
    (site / "_torch_from_the_dev_venv.pth").write_text(SITE_PACKAGES + "\n")
    for program in (kernel_builder, kernelhub_bin):
        shutil.copy(program, env / "bin" / program.name)
    return env / "bin"


def outside_path():
    """A PATH whose python3, if any, is not the environment's."""
    return {"PATH": "/usr/bin:/bin", "KERNELHUB_PYTHON": ""}


def test_list_variants_asks_the_environments_python(installed):
    result = run([installed / "kernel-builder", "list-variants", REPO_ROOT / "examples" / "relu",
                  "--json"], env=outside_path())
    listing = json.loads(result.stdout)
    assert listing["python"] == str(installed / "python3")
    assert listing["torch"] is not None


def test_kernelhub_names_the_interpreter_without_torch(installed, tmp_path):
    env = dict(outside_path(), HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    nowhere = tmp_path / "no-python"
    result = run([installed / "kernelhub", "download", "org/kernel", "--version", "1",
                  "--python", nowhere], env=env)
    assert result.returncode == 1
    assert f"note: no Python answered (asked {nowhere}); variants are chosen as for a " \
           "machine without torch: pass --python or set KERNELHUB_PYTHON" in result.stderr
    system_python = shutil.which("python3", path="/usr/bin:/bin")
    if system_python:
        other = run([installed / "kernelhub", "versions", "org/kernel", "--python",
                     system_python], env=env)
        has_torch = subprocess.run([system_python, "-c", "import torch"],
                                   capture_output=True).returncode == 0
        if not has_torch:
            assert f"note: torch is not installed for {system_python}" in other.stderr


def test_kernel_builder_builds_and_checks_with_the_environments_python(installed, tmp_path):
    """--python's default, python3, is the one beside kernel-builder when it has one."""
    kernel = tmp_path / "probe"
    (kernel / "torch-ext" / "probe").mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "probe"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\n'
        'backends = ["cpu"]\n\n[torch-noarch]\n')
    (kernel / "torch-ext" / "probe" / "__init__.py").write_text("import torch\n")
    result = run([installed / "kernel-builder", "build", kernel], env=outside_path())
    assert result.returncode == 0, result.stderr
    assert "torch-cpu: load check passed (" in result.stderr


def test_kernelhub_verify_takes_python_and_names_the_interpreter(installed, tmp_path):
    """verify picks a Hub kernel's cached variant as download does: --python names the
    interpreter, and a note says when it did not answer."""
    env = dict(outside_path(), HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    nowhere = tmp_path / "no-python"
    result = run([installed / "kernelhub", "verify", "org/kernel", "--version", "1",
                  "--python", nowhere], env=env)
    assert result.returncode == 1
    assert f"note: no Python answered (asked {nowhere})" in result.stderr


@pytest.mark.parametrize("command", ["download", "versions", "verify"])
def test_kernelhub_python_option_has_one_wording(kernelhub_bin, command):
    """The option comes from one declaration, so every command describes it the same way."""
    result = run([kernelhub_bin, command, "--help"], check=True)
    text = " ".join(result.stdout.split())
    assert "--python TEXT the interpreter whose torch decides" in text
    assert "(default: KERNELHUB_PYTHON, else the python3 beside this program, else PATH's)" \
        in text
