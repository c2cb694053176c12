# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build-and-upload` against `kernelhub serve`: a kernel that builds is built
and its variants land on the version branch; a kernel whose checks fail uploads nothing."""
import os
import shutil

from conftest import REPO_ROOT, VENV_BIN, run
from hub_cache_support import run_python, last_json

PYTHON = VENV_BIN / "python"


def files_on(hub_server, repo_id: str, revision: str):
    result = run_python(f"""
        import json
        from huggingface_hub import HfApi
        from huggingface_hub.errors import RepositoryNotFoundError
        api = HfApi(endpoint={hub_server.url!r})
        try:
            print(json.dumps(sorted(api.list_repo_files({repo_id!r}, repo_type="kernel",
                                                         revision={revision!r}))))
        except RepositoryNotFoundError:
            print(json.dumps(None))
    """, {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    return last_json(result)


def upload_env(hub_server, tmp_path):
    return {"HF_ENDPOINT": hub_server.url, "HF_TOKEN": hub_server.token,
            "HF_HOME": str(tmp_path / "home"), "NO_PROXY": "127.0.0.1,localhost"}


def test_build_and_upload_puts_the_built_variants_on_the_branch(kernel_builder, hub_server,
                                                                 tmp_path):
    kernel = tmp_path / "silu-and-mul"
    shutil.copytree(REPO_ROOT / "examples" / "silu-and-mul", kernel,
                    ignore=shutil.ignore_patterns("build"))
    env = dict(os.environ, **upload_env(hub_server, tmp_path))
    result = run([kernel_builder, "build-and-upload", kernel, "--python", PYTHON,
                  "--repo-id", "me/silu-and-mul"], env=env)
    assert result.returncode == 0, result.stderr
    built = sorted(p.name for p in (kernel / "build").iterdir() if not p.name.startswith("."))
    files = files_on(hub_server, "me/silu-and-mul", "v1")
    assert built and all(f"build/{variant}/metadata.json" in files for variant in built)
    assert f"build/{built[0]}/__init__.py" in files


def test_a_failing_build_uploads_nothing(kernel_builder, hub_server, tmp_path):
    kernel = tmp_path / "bad-registration"
    shutil.copytree(REPO_ROOT / "examples" / "bad-registration", kernel,
                    ignore=shutil.ignore_patterns("build"))
    env = dict(os.environ, **upload_env(hub_server, tmp_path))
    result = run([kernel_builder, "build-and-upload", kernel, "--python", PYTHON,
                  "--repo-id", "me/bad"], env=env)
    assert result.returncode != 0
    assert "ops.py:5:1" in result.stderr  # the offending decorator, from the checks
    assert files_on(hub_server, "me/bad", "main") is None  # the repository was never created
