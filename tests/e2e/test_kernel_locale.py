# SPDX-License-Identifier: Apache-2.0
"""A kernel that uses C++ locales (a stream formatting a double, std::regex) works once built
for manylinux_2_28 (docs/build.md). The build links private copies of the libstdc++ objects
newer than GLIBCXX_3.4.24 (compat/stdcxx_nonshared.py); a private copy of a locale facet's id
would disagree with the facets the system's libstdc++ installed, and use_facet would throw
std::bad_cast (the first attempt at the wheel's own link did exactly that). The op is called
through the reference loader and through ours.
"""
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)

LOCALE_CHECK = """
  {
    // Locale facets in the op: num_put through a stream, the regex traits' ctype and collate.
    std::ostringstream text;
    text.imbue(std::locale::classic());
    text << 1.5 << " relu";
    static const std::regex pattern("[0-9.]+ relu");
    TORCH_CHECK(std::regex_match(text.str(), pattern), "locale check failed: ", text.str());
  }
"""


@pytest.fixture(scope="module")
def locale_kernel(kernel_builder, tmp_path_factory):
    kernel = tmp_path_factory.mktemp("locale") / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel,
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    toml = kernel / "build.toml"
    lines = toml.read_text().splitlines()
    toml.write_text("\n".join('backends = ["cpu"]' if line.startswith("backends") else line
                              for line in lines) + "\n")
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    text = source.read_text()
    text = text.replace("#include <ATen/core/Tensor.h>\n",
                        "#include <ATen/core/Tensor.h>\n#include <locale>\n#include <regex>\n"
                        "#include <sstream>\n", 1)
    body = text.index("{", text.index("void relu(")) + 1
    source.write_text(text[:body] + LOCALE_CHECK + text[body:])
    result = run([kernel_builder, "build", kernel, "--python", PYTHON])
    assert result.returncode == 0, result.stderr
    return kernel


CALL = """
import pathlib, sys, torch
import {module} as loader
kernel = loader.get_local_kernel(pathlib.Path(sys.argv[1]){backend})
x = torch.randn(64)
assert torch.equal(kernel.relu(x), torch.relu(x))
print("called")
"""


# The reference picks the cpu variant only when asked (torch here is a CUDA build, no GPU).
@pytest.mark.parametrize("module, backend",
                         [("kernels", ', backend="cpu"'), ("kernelhub", "")])
def test_a_kernel_using_locales_runs(locale_kernel, module, backend):
    result = subprocess.run([PYTHON, "-c", CALL.format(module=module, backend=backend),
                             str(locale_kernel)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("called")
