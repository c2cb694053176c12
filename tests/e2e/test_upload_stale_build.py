# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder upload` refuses a build/ that does not come from the kernel as it is now
(issue 22 §3): build.toml's version bumped without a rebuild, sources edited since the build,
a folder copied with its build/. Nothing reaches the hub, and the message names the fix."""
import json
import shutil
import subprocess

import pytest

from conftest import VENV_BIN, run
from hub_cache_support import hub_env
from test_upload import make_kernel
from serve_helpers import http

PYTHON = VENV_BIN / "python"
REPO = "org/relu"


def upload(kernel_builder, hub_server, kernel, tmp_path, *args):
    env = hub_env(hub_server.url, tmp_path / "hf-cache")
    env["HF_TOKEN"] = hub_server.token
    return run([kernel_builder, "upload", kernel, "--no-check", *args], env=env)


def assert_refused(result, kernel, *reasons):
    assert result.returncode != 0, result.stdout
    assert "build/ does not come from the kernel as it is now" in result.stderr, result.stderr
    assert f"Run `kernel-builder build {kernel}`" in result.stderr, result.stderr
    for reason in reasons:
        assert reason in result.stderr, result.stderr


def repo_exists(hub_server, repo):
    status, _, _ = http(hub_server, "GET", f"/api/kernels/{repo}", token=hub_server.token)
    return status == 200


def refs_and_discussions(hub_server, repo):
    answers = []
    for path in (f"/api/kernels/{repo}/refs?include_prs=1", f"/api/kernels/{repo}/discussions"):
        status, _, body = http(hub_server, "GET", path, token=hub_server.token)
        assert status == 200, (path, status, body)
        answers.append(json.loads(body))
    return answers


def test_a_version_bump_without_a_rebuild_is_refused(kernel_builder, hub_server, tmp_path):
    # The steps: v2 published, `version = 3` in build.toml, no rebuild, --create-pr.
    kernel = make_kernel(tmp_path / "relu", ["torch-cpu"], version=2)
    published = upload(kernel_builder, hub_server, kernel, tmp_path)
    assert published.returncode == 0, published.stderr
    before = refs_and_discussions(hub_server, REPO)
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace("version = 2", "version = 3"))
    result = upload(kernel_builder, hub_server, kernel, tmp_path, "--create-pr")
    assert_refused(result, kernel,
                   "torch-cpu: it was built as version 2; build.toml says version 3")
    assert refs_and_discussions(hub_server, REPO) == before, "nothing reached the hub"


def noarch_kernel(folder):
    (folder / "torch-ext" / "relu").mkdir(parents=True)
    (folder / "build.toml").write_text(
        '[general]\nname = "relu"\nversion = 1\nbackends = ["cpu"]\nedition = 5\n'
        f'license = "apache-2.0"\n\n[general.hub]\nrepo-id = "{REPO}"\n\n[torch-noarch]\n')
    (folder / "torch-ext" / "relu" / "__init__.py").write_text(
        "import torch\n\n\ndef relu(x):\n    return torch.relu(x)\n")
    return folder


def build(kernel_builder, kernel):
    result = run([kernel_builder, "build", kernel, "--python", PYTHON])
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")
def test_edited_sources_and_a_copied_folder_are_refused_until_rebuilt(kernel_builder, hub_server,
                                                                      tmp_path):
    kernel = noarch_kernel(tmp_path / "relu")
    build(kernel_builder, kernel)

    source = kernel / "torch-ext" / "relu" / "__init__.py"
    source.write_text(source.read_text() + "\n\ndef edited():\n    return 1\n")
    assert_refused(upload(kernel_builder, hub_server, kernel, tmp_path), kernel,
                   "build.toml or the kernel's sources changed since it was built")
    assert not repo_exists(hub_server, REPO)

    # A folder copied with its build/ (no commit: a development id of its own).
    copy = tmp_path / "copy" / "relu"
    shutil.copytree(kernel, copy)
    assert_refused(upload(kernel_builder, hub_server, copy, tmp_path), copy,
                   "it was built in another folder")

    build(kernel_builder, kernel)
    result = upload(kernel_builder, hub_server, kernel, tmp_path)
    assert result.returncode == 0, result.stderr
    assert repo_exists(hub_server, REPO)

    build(kernel_builder, copy)
    result = upload(kernel_builder, hub_server, copy, tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not PYTHON.exists() or shutil.which("git") is None,
                    reason="needs the .venv with torch and git")
def test_a_commit_after_the_build_is_refused(kernel_builder, hub_server, tmp_path):
    kernel = noarch_kernel(tmp_path / "relu")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=kernel, check=True)
    (kernel / ".gitignore").write_text("build/\n")
    subprocess.run([*git, "add", "."], cwd=kernel, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], cwd=kernel, check=True)
    build(kernel_builder, kernel)
    variant = next(p for p in (kernel / "build").iterdir() if p.name != ".kernelhub")
    built_id = json.loads((variant / "metadata.json").read_text())["id"]

    (kernel / "NOTES.md").write_text("notes\n")
    subprocess.run([*git, "add", "NOTES.md"], cwd=kernel, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "two"], cwd=kernel, check=True)
    unique = built_id.rsplit("_", 1)[1]
    assert_refused(upload(kernel_builder, hub_server, kernel, tmp_path), kernel,
                   f"its kernel id ends in \"{unique}\"")
