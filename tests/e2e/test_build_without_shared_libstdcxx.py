# SPDX-License-Identifier: Apache-2.0
"""A compiler installed without its shared libstdc++ (compat/libstdcxx.cmake).

Found on the first GPU machine the project ran on (scripts/gpu-checks.sh, 2026-11-30): its
`g++` was a GCC 13 in /opt/gcc whose library folder holds libstdc++.a and no libstdc++.so. The
linker then took the static library for the driver's -lstdc++, every variant carried a second
C++ runtime beside torch's (exporting __cxa_throw, with locale ids of its own), and rmsnorm's
ops crashed with a segmentation fault as soon as a TORCH_CHECK message formatted a number.
A wrapper compiler stands in for that GCC here: the system's g++ with a library folder that
holds only libstdc++.a searched first, and no libstdc++.so for -print-file-name.
"""
import os
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None
    or shutil.which("g++") is None or shutil.which("readelf") is None,
    reason="needs the .venv with torch, cmake, ninja, g++ and readelf",
)

WRAPPER = """#!/bin/sh
# g++ as a GCC installed without its shared libstdc++ would behave.
for arg in "$@"; do
  case "$arg" in
    -print-file-name=libstdc++.so) echo libstdc++.so; exit 0 ;;
  esac
done
exec {gxx} -L{lib} "$@"
"""

# An error whose message formats a number, as rmsnorm's argument checks do.
CHECK = '\n  TORCH_CHECK(input.numel() != 7, "relu: refusing ", input.numel(), " elements");\n'

CALL = """
import pathlib, sys, torch
import kernelhub
kernel = kernelhub.get_local_kernel(pathlib.Path(sys.argv[1]), backend="cpu")
x = torch.randn(64)
assert torch.equal(kernel.relu(x), torch.relu(x))
try:
    kernel.relu(torch.randn(7))
except RuntimeError as error:
    print("raised:", str(error).splitlines()[0])
"""


@pytest.fixture(scope="module")
def built(kernel_builder, tmp_path_factory):
    root = tmp_path_factory.mktemp("no-shared-libstdcxx")
    static = subprocess.run(["g++", "-print-file-name=libstdc++.a"], capture_output=True,
                            text=True, check=True).stdout.strip()
    if not os.path.isabs(static):
        pytest.skip("g++ has no static libstdc++.a")
    lib = root / "gcc-lib"
    lib.mkdir()
    (lib / "libstdc++.a").symlink_to(static)
    wrapper = root / "bin" / "g++"
    wrapper.parent.mkdir()
    wrapper.write_text(WRAPPER.format(gxx=shutil.which("g++"), lib=lib))
    wrapper.chmod(0o755)

    kernel = root / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel,
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    toml = kernel / "build.toml"
    toml.write_text("\n".join('backends = ["cpu"]' if line.startswith("backends") else line
                              for line in toml.read_text().splitlines()) + "\n")
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    text = source.read_text()
    body = text.index("{", text.index("relu(")) + 1
    source.write_text(text[:body] + CHECK + text[body:])
    env = dict(os.environ, CXX=str(wrapper), CCACHE_DISABLE="1")
    result = run([kernel_builder, "build", kernel, "--python", PYTHON, "--no-sandbox", "-v"],
                 env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return kernel, result.stdout + result.stderr


def module_file(kernel):
    return next((kernel / "build").glob("torch*-cpu-*/*.so"))


def test_the_build_says_which_runtime_it_links(built):
    _kernel, output = built
    assert "has no shared libstdc++: the kernel links" in output, output[-3000:]


def test_the_kernel_needs_the_shared_runtime_and_defines_none_of_it(built):
    kernel, _output = built
    so = module_file(kernel)
    needed = subprocess.run(["readelf", "-d", so], capture_output=True, text=True,
                            check=True).stdout
    assert "[libstdc++.so.6]" in needed, needed
    exported = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True,
                              text=True, check=True).stdout.split()
    for runtime_symbol in ("__cxa_throw", "__gxx_personality_v0", "__cxa_begin_catch"):
        assert runtime_symbol not in exported, f"{so.name} exports {runtime_symbol}"


def test_an_error_that_formats_a_number_reaches_python(built):
    kernel, _output = built
    result = subprocess.run([PYTHON, "-c", CALL, str(kernel)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "raised: relu: refusing 7 elements" in result.stdout, result.stdout
