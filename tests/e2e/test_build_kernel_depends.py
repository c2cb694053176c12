# SPDX-License-Identifier: Apache-2.0
"""Kernels with `kernel-depends` through `kernel-builder build` with its checks on.

examples/dep-user takes examples/dep-base from `get_kernel_dep` while it is imported. Two
defects made such kernels need --skip-checks: check-imports refused the reference's idiom
`from kernels import get_kernel_dep`, and the load check ran offline in an empty HOME, so the
dependency was never found. Now the load check looks for a variant's dependencies (only
those) in the user's LOCAL_KERNELS and Hub cache, and a dependency found in neither is a note
naming it, not a failed build. All builds are noarch (no compiler).
"""
import json
import shutil
import textwrap

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"
EXAMPLES = REPO_ROOT / "examples"
BASE_REPO = "kernelhub-examples/dep-base"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")


def copy_example(name, destination):
    shutil.copytree(EXAMPLES / name, destination,
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    return destination


def use_the_kernels_idiom(kernel):
    """dep-user as a kernel written for the reference is: `from kernels import get_kernel_dep`."""
    package = kernel / "torch-ext" / "dep_user"
    (package / "_dependencies.py").unlink()
    (package / "__init__.py").write_text(textwrap.dedent(f"""\
        import torch
        from kernels import get_kernel_dep

        base = get_kernel_dep("{BASE_REPO}")


        def affine_twice(x: torch.Tensor, scale: float, shift: float) -> torch.Tensor:
            return base.scale_and_shift(base.scale_and_shift(x, scale, shift), scale, shift)
    """))
    return kernel


def isolated_env(tmp_path, **extra):
    """No user Hub cache and no LOCAL_KERNELS unless the test gives them."""
    cache = tmp_path / "empty-hub-cache"
    cache.mkdir(exist_ok=True)
    env = {"KERNELS_CACHE": str(cache), "HF_HUB_CACHE": str(cache), "LOCAL_KERNELS": ""}
    env.update(extra)
    return env


def build(kernel_builder, kernel, env):
    return run([kernel_builder, "build", kernel, "--python", PYTHON], env=env)


@pytest.fixture(scope="module")
def dep_base(built_example):
    """examples/dep-base built (it has no kernel-depends of its own), shared with other files
    by conftest's built_example: LOCAL_KERNELS points at it, nothing changes it."""
    example = built_example("dep-base")
    assert example.result.returncode == 0, example.result.stderr
    return example.kernel


def test_check_imports_allows_get_kernel_dep_from_the_loader(kernel_builder, tmp_path):
    kernel = use_the_kernels_idiom(copy_example("dep-user", tmp_path / "dep-user"))
    result = run([kernel_builder, "check-imports", kernel])
    assert result.returncode == 0, result.stderr
    # Only get_kernel_dep: fetching undeclared kernels at import time stays an error.
    init = kernel / "torch-ext" / "dep_user" / "__init__.py"
    init.write_text(init.read_text().replace("import get_kernel_dep",
                                             "import get_kernel_dep, get_kernel"))
    refused = run([kernel_builder, "check-imports", kernel])
    assert refused.returncode == 1
    assert 'may import only "get_kernel_dep" from the loader "kernels", not "get_kernel"' \
        in refused.stderr


@pytest.mark.parametrize("idiom", ["example", "kernels-idiom"])
def test_build_load_checks_kernel_depends_from_local_kernels(kernel_builder, dep_base, tmp_path,
                                                            idiom):
    kernel = copy_example("dep-user", tmp_path / "dep-user")
    if idiom == "kernels-idiom":
        use_the_kernels_idiom(kernel)
    env = isolated_env(tmp_path, LOCAL_KERNELS=f"{BASE_REPO}={dep_base}")
    result = build(kernel_builder, kernel, env)
    assert result.returncode == 0, result.stderr
    assert "neither in LOCAL_KERNELS" not in result.stderr
    checked = run([kernel_builder, "check-load", kernel / "build" / "torch-cpu", "--python",
                   PYTHON, "--json"], env=env)
    assert checked.returncode == 0, checked.stderr
    assert [v["loaded"] for v in json.loads(checked.stdout)["variants"]] == [True]


def test_build_load_check_fails_when_the_dependency_breaks_the_kernel(kernel_builder, dep_base,
                                                                      tmp_path):
    """The dependency is really loaded: a dep-user that uses a name dep-base lacks fails."""
    kernel = copy_example("dep-user", tmp_path / "dep-user")
    init = kernel / "torch-ext" / "dep_user" / "__init__.py"
    init.write_text(init.read_text() + "\nbase.no_such_op\n")
    result = build(kernel_builder, kernel,
                   isolated_env(tmp_path, LOCAL_KERNELS=f"{BASE_REPO}={dep_base}"))
    assert result.returncode == 1
    assert "no_such_op" in result.stderr


def test_build_without_the_dependency_says_so_and_passes(kernel_builder, tmp_path):
    kernel = copy_example("dep-user", tmp_path / "dep-user")
    result = build(kernel_builder, kernel, isolated_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (f'not load-checked: its kernel-depends "{BASE_REPO}" is neither in LOCAL_KERNELS '
            f"nor in the Hub cache; to check it, build or download that kernel and set "
            f"LOCAL_KERNELS={BASE_REPO}=<its folder>") in result.stderr
    assert "error:" not in result.stderr
