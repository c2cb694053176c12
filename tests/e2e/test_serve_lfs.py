# SPDX-License-Identifier: Apache-2.0
"""Git LFS end to end against `kernelhub serve`, as strict as huggingface.co (issue 19).

A real relu build whose variant holds a 12 MB and a 1.5 MB binary `.so` (the build's own
library padded: ELF loaders ignore bytes past the sections) is published by huggingface_hub
2.4.0 and by `kernel-builder upload`; preupload marks both `.so` files `lfs`, so they reach the
server through the LFS batch API (asserted from the server's store), the git tree holds their
pointers, and the reference `kernels` and our `kernelhub` load them through the resolve
redirect. A `git clone` shows the pointers and `git lfs pull` fetches the same bytes. A
regular commit of a binary is refused as the Hub refuses it. The wire forms are listed with
their sources in tests/data/hub/lfs-wire-forms.md."""
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import VENV_BIN, copy_built, run, start_hub_server, stop_hub_server
from serve_helpers import client_env, commit, http, run_client, wait_for_variant_checks

PYTHON = str(VENV_BIN / "python")
BIG = 12 * 1000 * 1000
SMALL = 1500 * 1000
CONFIG = "[organizations.org]\ntrustedKernelPublisher = true\n"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pad(path: Path, size: int, seed: bytes):
    """Appends bytes derived from `seed` (incompressible, repeatable) up to `size`."""
    with path.open("ab") as f:
        counter = 0
        while f.tell() < size:
            block = hashlib.sha256(seed + counter.to_bytes(8, "little")).digest() * 2048
            f.write(block[: size - f.tell()])
            counter += 1


@pytest.fixture(scope="module")
def padded_kernel(kernel_builder, built_example, tmp_path_factory) -> Path:
    """examples/relu built for cpu (a copy of conftest's shared built_example), its library
    padded to 12 MB and a 1.5 MB library beside it, the digest rewritten so the variant still
    checks."""
    tmp = tmp_path_factory.mktemp("lfs-kernel")
    kernel = tmp / "relu"
    example = built_example("relu", ["cpu"])
    assert example.result.returncode == 0, example.result.stderr
    copy_built(example.kernel, kernel)
    (variant,) = [p for p in (kernel / "build").iterdir() if p.is_dir() and not p.name.startswith(".")]
    (library,) = variant.glob("*.so")
    shutil.copy(library, variant / "libaux.so")
    pad(library, BIG, b"big")
    pad(variant / "libaux.so", SMALL, b"small")
    run([kernel_builder, "hash", "--write", variant], check=True)
    return kernel


def variant_of(kernel: Path) -> Path:
    (variant,) = [p for p in (kernel / "build").iterdir() if p.is_dir() and not p.name.startswith(".")]
    return variant


def stored_objects(server, repo: str) -> set:
    """The sha256 names in the repository's LFS store on the server's disk."""
    folder = server.root / "kernels" / repo.split("/")[0] / (repo.split("/")[1] + ".git") / "lfs" / "objects"
    return {p.name for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


def load_both(server, home: Path, repo: str) -> dict:
    """Loads `repo` v1 with the reference kernels and with kernelhub, each in its own process
    and cache, calls relu and compares it with torch's."""
    out = {}
    for package in ("kernels", "kernelhub"):
        out[package] = run_client(server, home / package, f"""
            import json, torch
            import {package} as k
            kernel = k.get_kernel({repo!r}, version=1, backend="cpu")
            x = torch.randn(1024)
            print(json.dumps(bool(torch.equal(kernel.relu(x), torch.relu(x)))))
        """, telemetry=package == "kernels")
    return out


def cache_blob_names(home: Path, repo: str) -> set:
    blobs = home / "hub" / ("kernels--" + repo.replace("/", "--")) / "blobs"
    return {p.name for p in blobs.iterdir()} if blobs.exists() else set()


def publish_with_huggingface_hub(server, home: Path, kernel: Path):
    """huggingface_hub's upload_folder of the kernel's build/ to org/relu, branched as v1."""
    run_client(server, home, f"""
        from huggingface_hub import HfApi
        api = HfApi()
        api.create_repo("org/relu", repo_type="kernel")
        api.upload_folder(repo_id="org/relu", repo_type="kernel",
                          folder_path={str(kernel / "build")!r}, path_in_repo="build",
                          ignore_patterns=".kernelhub/**")
        api.create_branch("org/relu", repo_type="kernel", branch="v1")
    """)


@pytest.fixture
def lfs_hub(kernelhub_bin, tmp_path):
    server = start_hub_server(kernelhub_bin, tmp_path, CONFIG)
    yield server
    stop_hub_server(server)


def test_huggingface_hub_upload_goes_through_lfs_and_both_loaders_load(
        lfs_hub, padded_kernel, tmp_path):
    variant = variant_of(padded_kernel)
    sizes = {p.name: p.stat().st_size for p in variant.glob("*.so")}
    assert sorted(sizes.values()) == [SMALL, BIG]
    publish_with_huggingface_hub(lfs_hub, tmp_path / "up", padded_kernel)
    oids = {sha256(p) for p in variant.glob("*.so")}
    assert oids <= stored_objects(lfs_hub, "org/relu")
    # The tree holds pointers: each .so is listed with lfs {oid, size, pointerSize}.
    tree = run_client(lfs_hub, tmp_path / "up", """
        import json
        from huggingface_hub import HfApi
        files = HfApi().list_repo_tree("org/relu", repo_type="kernel", recursive=True)
        print(json.dumps({f.path: [f.size, f.lfs.sha256 if f.lfs else None, f.blob_id]
                          for f in files if hasattr(f, "blob_id")}))
    """)
    for path in variant.glob("*.so"):
        size, lfs_oid, blob_id = tree[f"build/{variant.name}/{path.name}"]
        assert (size, lfs_oid) == (path.stat().st_size, sha256(path))
        pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{lfs_oid}\nsize {size}\n"
        assert blob_id == hashlib.sha1(f"blob {len(pointer)}\0{pointer}".encode()).hexdigest()
    metadata, = [v for k, v in tree.items() if k.endswith("metadata.json")]
    assert metadata[1] is None  # text stays a regular git blob

    # The hub's digest check (after the upload, on its worker) reads the LFS objects, not the
    # pointers.
    checks = wait_for_variant_checks(lfs_hub, "kernels/org/relu", "v1")
    assert [(v["state"], v["checkedAt"], v["digest"]["matches"]) for v in checks["variants"]] \
        == [("recorded", "upload", True)], checks
    status, _, page = http(lfs_hub, "GET", "/kernels/org/relu")
    row = re.search(rf'<tr data-variant="{re.escape(variant.name)}">(.*?)</tr>', page.decode(), re.S)
    assert status == 200 and row, page[:2000]
    cells = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td>(.*?)</td>", row.group(1), re.S)]
    assert any(cell.endswith("files match") for cell in cells), cells

    assert load_both(lfs_hub, tmp_path, "org/relu") == {"kernels": True, "kernelhub": True}
    # Both clients name the cache blobs of LFS files by their sha256, as huggingface_hub does.
    for package in ("kernels", "kernelhub"):
        assert oids <= cache_blob_names(tmp_path / package, "org/relu"), package


def test_regular_commit_of_a_binary_is_refused_as_the_hub_refuses_it(lfs_hub, padded_kernel,
                                                                     tmp_path):
    run_client(lfs_hub, tmp_path / "hf", """
        from huggingface_hub import HfApi
        HfApi().create_repo("org/raw", repo_type="kernel")
    """)
    library = next(variant_of(padded_kernel).glob("libaux.so"))
    status, headers, body = commit(lfs_hub, "kernels/org/raw", "main",
                                   {"build/x/libaux.so": library.read_bytes(),
                                    "README.md": b"# fine\n"})
    assert status == 400
    message = json.loads(body)["error"]
    assert "rejected because it contains binary" in message
    assert "build/x/libaux.so (binary)" in message and "README.md" not in message
    # Nothing was committed.
    status, _, _ = http(lfs_hub, "HEAD", "/kernels/org/raw/resolve/main/README.md")
    assert status == 404
    # preupload says why beforehand: the sample's NUL byte.
    result = run_client(lfs_hub, tmp_path / "hf", f"""
        import json
        from huggingface_hub import CommitOperationAdd
        from huggingface_hub._commit_api import _fetch_upload_modes
        from huggingface_hub.utils import build_hf_headers
        ops = [CommitOperationAdd("a.so", {str(library)!r}), CommitOperationAdd("a.txt", b"text")]
        _fetch_upload_modes(additions=ops, repo_type="kernel", repo_id="org/raw",
                            headers=build_hf_headers(), revision="main")
        print(json.dumps([op._upload_mode for op in ops]))
    """)
    assert result == ["lfs", "regular"]


def test_with_hf_xet_enabled_the_upload_fails_saying_how_to_use_lfs(lfs_hub, padded_kernel,
                                                                    tmp_path):
    library = next(variant_of(padded_kernel).glob("libaux.so"))
    env = client_env(lfs_hub, tmp_path / "hf")
    del env["HF_HUB_DISABLE_XET"]
    status, _, body = http(lfs_hub, "GET", "/api/kernels/org/x/xet-write-token/main",
                           token=lfs_hub.token)
    assert status == 501 and b"HF_HUB_DISABLE_XET=1" in body
    code = f"""
        from huggingface_hub import HfApi
        api = HfApi()
        api.create_repo("org/xet", repo_type="kernel")
        api.upload_file(path_or_fileobj={str(library)!r}, path_in_repo="a.so", repo_id="org/xet",
                        repo_type="kernel")
    """
    import textwrap
    result = subprocess.run([PYTHON, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode != 0
    assert "HF_HUB_DISABLE_XET" in result.stdout + result.stderr or "501" in result.stderr


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="needs git-lfs (Debian's git-lfs)")
def test_git_clone_shows_pointers_and_git_lfs_pull_fetches_the_bytes(lfs_hub, padded_kernel,
                                                                     tmp_path):
    publish_with_huggingface_hub(lfs_hub, tmp_path / "up", padded_kernel)
    home = tmp_path / "git-home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
               GIT_LFS_SKIP_SMUDGE="1", NO_PROXY="127.0.0.1,localhost")
    clone = tmp_path / "clone"
    result = subprocess.run(["git", "clone", f"{lfs_hub.url}/kernels/org/relu", str(clone)],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    variant = variant_of(padded_kernel)
    cloned = clone / "build" / variant.name
    for library in variant.glob("*.so"):
        pointer = (cloned / library.name).read_text()
        assert pointer == (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256(library)}"
                           f"\nsize {library.stat().st_size}\n")
    assert (cloned / "metadata.json").read_bytes() == (variant / "metadata.json").read_bytes()
    env.pop("GIT_LFS_SKIP_SMUDGE")
    for command in (["git", "lfs", "install", "--local"], ["git", "lfs", "pull"]):
        result = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    for library in variant.glob("*.so"):
        assert sha256(cloned / library.name) == sha256(library)
    # Pushing with git is refused with a pointer to the Hub API.
    status, _, body = http(lfs_hub, "GET", "/kernels/org/relu/info/refs?service=git-receive-pack")
    assert status == 403
