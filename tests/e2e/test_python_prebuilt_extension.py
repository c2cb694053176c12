# SPDX-License-Identifier: Apache-2.0
"""The Python package's build with KERNELHUB_PREBUILT_EXTENSION (what scripts/setup.sh passes):
the wheel holds the given module byte for byte, beside the package's Python files and entry
point, and no compiler runs. The setting holds for that configure only: the same build folder
configured again without it is the whole project, which compiles the module itself.

Before, the set-up compiled the layers a second time for the package (ccache missed every unity
batch: a batch's source lies in each build folder and ccache hashes its path), 159 s of a cold
set-up; installing the root build's module takes seconds."""
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv (scikit-build-core, nanobind), cmake and ninja")


def test_a_prebuilt_extension_is_installed_as_it_is_and_for_that_build_only(tmp_path):
    # Any file stands for the module: the build must copy it, not look into it.
    module = tmp_path / "_kernelhub.cpython-311-x86_64-linux-gnu.so"
    module.write_bytes(b"\x7fELF not really a module " + bytes(range(256)))
    build_dir = tmp_path / "package-build"
    wheel_dir = tmp_path / "wheels"
    run([PYTHON, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
         "--no-build-isolation", "--no-deps", "-w", wheel_dir,
         f"--config-settings=cmake.define.KERNELHUB_PREBUILT_EXTENSION={module}",
         f"--config-settings=build-dir={build_dir}", REPO_ROOT / "python"], check=True)
    [wheel] = wheel_dir.glob("kernelhub-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert archive.read(f"kernelhub/{module.name}") == module.read_bytes()
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt")))
    assert [n for n in names if n.endswith(".so")] == [f"kernelhub/{module.name}"]
    assert "kernelhub/__init__.py" in names and "kernelhub/layer/__init__.py" in names
    assert b"kernels.lock = kernelhub._locks:write_egg_lockfile" in entry_points
    cache = (build_dir / "CMakeCache.txt").read_text()
    assert "CMAKE_CXX_COMPILER:" not in cache  # LANGUAGES NONE: no compiler was even found
    assert "KERNELHUB_PREBUILT_EXTENSION" not in cache

    # The same folder configured without it: the whole project (the layers and the module).
    run(["cmake", "-S", REPO_ROOT / "python", "-B", build_dir, f"-DPython_EXECUTABLE={PYTHON}"],
        check=True)
    ninja = (build_dir / "build.ninja").read_text()
    assert "kh_loader" in ninja and "_kernelhub" in ninja
    bad = run([PYTHON, "-m", "pip", "wheel", "--disable-pip-version-check",
               "--no-build-isolation", "--no-deps", "-w", wheel_dir,
               "--config-settings=cmake.define.KERNELHUB_PREBUILT_EXTENSION="
               f"{tmp_path / 'missing.so'}",
               f"--config-settings=build-dir={tmp_path / 'other-build'}", REPO_ROOT / "python"])
    assert bad.returncode != 0
    said = bad.stdout + bad.stderr
    assert "KERNELHUB_PREBUILT_EXTENSION: no file" in said and "missing.so" in said, said
