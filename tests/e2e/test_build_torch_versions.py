# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build --torch 2.14,2.15`: one variant per torch, each built in its own cached
environment and each loaded by the REFERENCE loader under ITS torch.

Slow: the first run makes the torch 2.14 environment (a ~560 MB torch wheel from PyPI; the
CUDA libraries are borrowed from the .venv) and compiles relu twice. The environments live in
$KERNELHUB_TEST_TORCH_ENVS when set (reused between runs), else under pytest's temp folder.
"""
import glob
import json
import os
import platform
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, VENV_BIN

PYTHON = VENV_BIN / "python"
EXAMPLE = REPO_ROOT / "examples" / "relu"
VERSIONS = ("2.14", "2.15")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None
        or platform.system() != "Linux",
        reason="needs Linux and the .venv with torch, cmake and ninja",
    ),
]


def venv_site_packages():
    out = subprocess.run([str(PYTHON), "-c",
                          "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def built(kernel_builder, tmp_path_factory):
    envs = os.environ.get("KERNELHUB_TEST_TORCH_ENVS") or str(tmp_path_factory.mktemp("envs"))
    kernel_dir = tmp_path_factory.mktemp("versions") / "relu"
    shutil.copytree(EXAMPLE, kernel_dir, ignore=shutil.ignore_patterns("build", "__pycache__"))
    toml = kernel_dir / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    result = build(kernel_builder, kernel_dir, envs)
    assert result.returncode == 0, result.stderr[-4000:]
    return kernel_dir, json.loads(result.stdout), os.path.join(envs, "kernelhub", "torch-envs")


def build(kernel_builder, kernel_dir, cache_home):
    """Builds with the torch environments under `cache_home`; pip's, uv's and ccache's caches
    stay where they were, so a fresh environment folder does not mean a cold download or
    compile (the environments are made with the .venv's uv, which links torch's files from its
    cache)."""
    home = os.path.expanduser("~/.cache")
    env = dict(os.environ, XDG_CACHE_HOME=cache_home,
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", os.path.join(home, "pip")),
               UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", os.path.join(home, "uv")),
               CCACHE_DIR=os.environ.get("CCACHE_DIR", os.path.join(home, "ccache")))
    # Longer than conftest.run allows: the first run downloads and installs torch.
    return subprocess.run(
        [str(kernel_builder), "build", str(kernel_dir), "--python", str(PYTHON), "--json",
         "--unique-id", "multi", "--torch", ",".join(VERSIONS)],
        env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=2400)


def test_one_variant_per_torch(built):
    _, summary, envs = built
    machine = platform.machine()
    assert [v["name"] for v in summary["variants"]] == [
        f"torch{v.replace('.', '')}-cxx11-cpu-{machine}-linux" for v in VERSIONS]
    for version in VERSIONS:
        assert os.path.exists(os.path.join(envs, version, ".kernelhub-ready"))


@pytest.mark.parametrize("version", VERSIONS)
def test_each_variant_loads_under_its_own_torch(built, version):
    kernel_dir, summary, envs = built
    python = os.path.join(envs, version, "bin", "python")
    # The reference `kernels` package comes from the .venv, appended AFTER the environment's
    # own site-packages so that its torch is the one imported.
    script = f"""
import json, pathlib, sys
sys.path.append({venv_site_packages()!r})
import torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel_dir)!r}), backend="cpu")
x = torch.randn(4096)
print(json.dumps({{"torch": torch.__version__, "equal": torch.equal(k.relu(x), torch.relu(x)),
                   "file": k.__file__}}))
"""
    result = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["torch"].startswith(version + ".")
    assert out["equal"]
    assert f"torch{version.replace('.', '')}-cxx11-cpu" in out["file"]


def test_environments_are_reused(built, kernel_builder):
    """A second build finds both environments ready and makes none."""
    kernel_dir, _, envs = built
    result = build(kernel_builder, kernel_dir, os.path.dirname(os.path.dirname(envs)))
    assert result.returncode == 0, result.stderr[-4000:]
    assert "making the torch" not in result.stderr


@pytest.mark.skipif(bool(os.environ.get("KERNELHUB_TEST_TORCH_ENVS")),
                    reason="the environments may have been made before, by another installer")
def test_the_environment_is_made_with_the_venvs_uv(built):
    """The .venv has uv (scripts/setup.sh): the 2.14 environment's torch came through it, linked
    from uv's cache, not unpacked again by pip; pip is still in the environment for users."""
    _, _, envs = built
    env = os.path.join(envs, "2.14")
    installers = {}
    for installer in glob.glob(os.path.join(env, "lib", "python*", "site-packages",
                                            "*.dist-info", "INSTALLER")):
        name = os.path.basename(os.path.dirname(installer)).split("-")[0]
        with open(installer) as f:
            installers[name] = f.read().strip()
    assert installers.get("torch") == "uv", installers
    assert installers.get("sympy") == "uv", installers
    assert installers.get("pip") == "pip", installers
