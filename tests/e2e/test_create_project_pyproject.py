# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder create-project` writes pyproject.toml and setup.py (issue 13 item 13, what
the reference's create-pyproject is for): `pip install --no-build-isolation -e` of the project
in a throw-away environment gives an editable install where `import <kernel>` calls the op
the project compiles, and edits to the kernel's Python show without reinstalling."""
import shutil
import subprocess
import sys

import pytest

from conftest import REPO_ROOT, run, venv_torch
from test_build_variant import noarch_kernel

SITE_PACKAGES = venv_torch().get("site_packages", "")

pytestmark = pytest.mark.skipif(not SITE_PACKAGES or sys.platform != "linux",
                                reason="needs Linux and the .venv with torch")


def throwaway_env(root):
    """A venv that sees the dev environment's packages (torch, pip, setuptools) through a .pth,
    as --system-site-packages would, with nothing of its own."""
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True,
                   timeout=120)
    [site] = list((env / "lib").glob("python3*/site-packages"))
    (site / "_dev_packages.pth").write_text(SITE_PACKAGES + "\n")
    return env / "bin" / "python"


def pip_install_editable(python, project):
    result = subprocess.run([str(python), "-m", "pip", "install", "--no-build-isolation",
                             "--no-index", "--disable-pip-version-check", "-e", str(project)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def python_says(python, code, cwd):
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                            timeout=300, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_editable_install_of_relu_calls_the_compiled_op(kernel_builder, tmp_path):
    kernel = tmp_path / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel,
                    ignore=shutil.ignore_patterns("build"))
    created = run([kernel_builder, "create-project", kernel, "--unique-id", "dev1"], check=True)
    project = kernel / "build" / "project"
    assert f"Wrote the build project to {project}" in created.stdout
    assert (project / "pyproject.toml").exists() and (project / "setup.py").exists()
    python = throwaway_env(tmp_path)
    pip_install_editable(python, project)
    answer = python_says(python, "import torch, relu\n"
                                 "x = torch.randn(64)\n"
                                 "print(relu.relu(x).equal(torch.relu(x)), relu.ops.name)\n",
                         cwd=tmp_path)
    assert answer == "True _relu_cpu_dev1"
    # Editable: the kernel's own package file is the one imported, so an edit shows at once.
    init = kernel / "torch-ext" / "relu" / "__init__.py"
    init.write_text(init.read_text() + "\nEDITED_IN_PLACE = True\n")
    assert python_says(python, "import relu; print(relu.EDITED_IN_PLACE)", cwd=tmp_path) == "True"
    # The kernel's sources are untouched: everything generated is in the project folder.
    assert not (kernel / "torch-ext" / "relu" / "_ops.py").exists()
    assert not list((kernel / "torch-ext").rglob("*.so"))


def test_editable_install_of_a_noarch_kernel(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    (kernel / "torch-ext" / "pick" / "__init__.py").write_text(
        "import torch\nfrom ._ops import ops\n\ndef twice(x):\n    return x * 2\n")
    run([kernel_builder, "create-project", kernel, "--target", tmp_path / "project"], check=True)
    python = throwaway_env(tmp_path)
    pip_install_editable(python, tmp_path / "project")
    assert python_says(python, "import torch, pick; print(pick.twice(torch.ones(2)).tolist())",
                       cwd=tmp_path) == "[2.0, 2.0]"
