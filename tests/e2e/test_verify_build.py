# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder verify-build` (issue 24 §3): a kernel built from a commit and uploaded to a
`kernelhub serve` hub is rebuilt from that commit (a --source checkout, or a clone of the
origin its provenance names) and found "reproduced"; once its .so is replaced on the hub, the
same command names that file and the ELF section that differs. Errors (a checkout at another
commit, a build from a dirty tree) exit 2 with a clear message and build nothing."""
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, VENV_BIN, run
from hub_cache_support import hub_env, run_python
from test_build_reproducible import GIT_IDENTITY  # one fixed identity: one commit id

PYTHON = VENV_BIN / "python"
REPO = "org/relu"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja")



def git(kernel: Path, *args) -> str:
    result = subprocess.run(["git", *args], cwd=kernel, capture_output=True, text=True,
                            env={**os.environ, **GIT_IDENTITY})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def checkout(folder: Path) -> Path:
    """examples/relu with only its cpu backend, committed with a fixed identity; its origin
    remote is its own folder, so the origin path clones from there."""
    kernel = folder / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__"))
    toml = kernel / "build.toml"
    text = toml.read_text()
    replaced = text.replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]')
    assert replaced != text
    toml.write_text(replaced)
    (kernel / ".gitignore").write_text("build/\n")
    git(kernel, "init", "-q", "-b", "main")
    git(kernel, "add", "-A")
    git(kernel, "commit", "-q", "-m", "kernel")
    git(kernel, "remote", "add", "origin", str(kernel))
    return kernel


def env_for(hub_server, tmp_path: Path, cache: str) -> dict:
    env = hub_env(hub_server.url, tmp_path / cache)
    env["HF_TOKEN"] = hub_server.token
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    return env


def verify(kernel_builder, env: dict, *args):
    return run([kernel_builder, "verify-build", REPO, "--python", PYTHON, *args], env=env)


def flip_text_byte(so: bytes) -> bytes:
    """The module with one byte of its .text section changed (ELF64 little-endian)."""
    shoff, = struct.unpack_from("<Q", so, 0x28)
    entsize, count, strndx = struct.unpack_from("<HHH", so, 0x3a)
    headers = [struct.unpack_from("<IIQQQQ", so, shoff + i * entsize) for i in range(count)]
    names_at = headers[strndx][4]
    for name, _type, _flags, _addr, offset, _size in headers:
        end = so.index(b"\0", names_at + name)
        if so[names_at + name:end] == b".text":
            at = offset + 16
            return so[:at] + bytes([so[at] ^ 0xff]) + so[at + 1:]
    raise AssertionError("no .text section")


@pytest.fixture
def published(kernel_builder, hub_server, tmp_path):
    """The kernel built from its commit and uploaded as version 1 of org/relu."""
    kernel = checkout(tmp_path / "author")
    env = env_for(hub_server, tmp_path, "author-cache")
    built = run([kernel_builder, "build", kernel, "--python", PYTHON, "--json", "--skip-checks"],
                env={**env, "CCACHE_DISABLE": "1"})
    assert built.returncode == 0, built.stderr
    variants = json.loads(built.stdout)["variants"]
    assert len(variants) == 1
    uploaded = run([kernel_builder, "upload", kernel, "--repo-id", REPO, "--no-check"], env=env)
    assert uploaded.returncode == 0, uploaded.stderr
    return kernel, variants[0]


def test_reproduced_then_differs_once_the_so_is_replaced(kernel_builder, hub_server, tmp_path,
                                                         published):
    kernel, variant = published
    name = variant["name"]
    env = {**env_for(hub_server, tmp_path, "verify-cache"), "CCACHE_DISABLE": "1"}

    result = verify(kernel_builder, env, "--version", "1", "--source", kernel)
    assert result.returncode == 0, result.stdout + result.stderr
    line, = result.stdout.splitlines()
    word, shown, digest = line.split()
    assert (word, shown) == ("reproduced", name)
    assert digest.startswith("sha256:")

    # No --source: the origin its provenance names is cloned; --json for CI.
    result = verify(kernel_builder, env, "--version", "1", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["reproduced"] is True and report["error"] is None
    assert report["kernel_commit"] == git(kernel, "rev-parse", "HEAD")
    assert report["unique_id"] == variant["id"].rsplit("_", 1)[1]
    assert report["sources"] == str(kernel)
    assert report["not_rebuilt"] == []
    entry, = report["variants"]
    assert entry["name"] == name and entry["reproduced"] is True
    assert entry["digest"] == digest and entry["file"] is None and entry["hint"] is None

    # The .so replaced on the hub (one byte of its code changed) on the version branch.
    so, = (Path(variant["path"])).rglob("*.so")
    in_repo = f"build/{name}/{so.relative_to(variant['path']).as_posix()}"
    tampered = tmp_path / "tampered.so"
    tampered.write_bytes(flip_text_byte(so.read_bytes()))
    run_python(f"""
        from huggingface_hub import HfApi
        api = HfApi(endpoint={hub_server.url!r}, token={hub_server.token!r})
        api.upload_file(path_or_fileobj={str(tampered)!r}, path_in_repo={in_repo!r},
                        repo_id={REPO!r}, repo_type="kernel", revision="v1")
        print("{{}}")
    """, hub_env(hub_server.url, tmp_path / "tamper-cache"))

    result = verify(kernel_builder, env, "--version", "1", "--source", kernel)
    assert result.returncode == 1, result.stdout + result.stderr
    relative = so.relative_to(variant["path"]).as_posix()
    assert result.stdout.splitlines() == [
        f"differs {name}: {relative}: ELF section .text differs (at byte 16 of the section)"]
    result = verify(kernel_builder, env, "--version", "1", "--source", kernel, "--json",
                    "--variant", name)
    assert result.returncode == 1
    entry, = json.loads(result.stdout)["variants"]
    assert (entry["reproduced"], entry["file"]) == (False, relative)
    assert entry["hint"].startswith("ELF section .text differs")


def test_a_checkout_at_another_commit_is_refused(kernel_builder, hub_server, tmp_path,
                                                 published):
    kernel, _ = published
    published_commit = git(kernel, "rev-parse", "HEAD")
    (kernel / "NOTES.md").write_text("later\n")
    git(kernel, "add", "NOTES.md")
    git(kernel, "commit", "-q", "-m", "later")
    env = env_for(hub_server, tmp_path, "verify-cache")
    result = verify(kernel_builder, env, "--version", "1", "--source", kernel)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"but the published build names {published_commit}" in result.stderr
    assert f"git checkout {published_commit}" in result.stderr

    result = verify(kernel_builder, env, "--version", "1", "--variant", "torch-nope")
    assert result.returncode == 2
    assert 'variant "torch-nope" is not published' in result.stderr


def test_a_build_from_a_dirty_tree_cannot_be_verified(kernel_builder, hub_server, tmp_path):
    """A hand-made variant whose provenance says dirty: refused before anything is built."""
    kernel = tmp_path / "dirty"
    variant = kernel / "build" / "torch-cpu"
    (variant / "relu").mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "relu"\nversion = 1\nbackends = ["cpu"]\nedition = 5\n'
        'license = "apache-2.0"\n\n[torch-noarch]\n')
    (variant / "relu" / "__init__.py").write_text("")
    (variant / "metadata.json").write_text(json.dumps({
        "name": "relu", "id": "_relu_cpu_abc1234_dirty", "version": 1, "license": "apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"},
        "provenance": {"kernel-builder": {"version": "0.1.0"},
                       "kernel": {"commit": "a" * 40, "dirty": True}}}))
    env = env_for(hub_server, tmp_path, "author-cache")
    uploaded = run([kernel_builder, "upload", kernel, "--repo-id", REPO, "--no-check"], env=env)
    assert uploaded.returncode == 0, uploaded.stderr
    result = verify(kernel_builder, env_for(hub_server, tmp_path, "v-cache"), "--version", "1",
                    "--json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "built from a dirty tree" in result.stderr
    report = json.loads(result.stdout)
    assert report["reproduced"] is False and "dirty tree" in report["error"]
