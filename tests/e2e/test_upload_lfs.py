# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder upload` through Git LFS (issue 19 part 2), against `kernelhub serve`, which
marks binaries and files over 10 MB `lfs` as huggingface.co does.

A relu build whose variant holds a 12 MB and a 1.5 MB binary `.so` (test_serve_lfs's padded
kernel) is uploaded by kernel-builder: both libraries reach the server's LFS store through the
batch API, huggingface_hub's snapshot_download gets the same bytes, the reference `kernels` and
`kernelhub` load it and name the cache blobs by sha256, and a second upload finds nothing to
send; `kernelhub lock --legacy` hashes the libraries by their sha256 as the tree lists them.
Then a 2 GiB file (sparse, made at test time) goes up multipart and comes down with
`kernelhub download`: each client's peak resident memory grows by less than 64 MiB over the
same command with a small file, and a download killed halfway resumes. Memory bounds and byte
counts, not timings."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run, start_hub_server, stop_hub_server
from serve_helpers import client_env, run_client
from test_serve_lfs import (CONFIG, cache_blob_names, load_both, padded_kernel,  # noqa: F401
                            sha256, stored_objects, variant_of)

REPO = "org/relu"
BIG_SIZE = int(os.environ.get("KERNELHUB_LFS_TEST_BYTES", str(2 << 30)))
MAX_GROWTH = 64 << 20


@pytest.fixture
def lfs_hub(kernelhub_bin, tmp_path):
    server = start_hub_server(kernelhub_bin, tmp_path, CONFIG)
    yield server
    stop_hub_server(server)


def upload(kernel_builder, server, kernel: Path, home: Path, *args):
    report = home / "upload.json"
    home.mkdir(parents=True, exist_ok=True)
    result = run([kernel_builder, "upload", kernel, "--no-check", "--repo-id", REPO,
                  "--output-json", report, *args], env=client_env(server, home))
    assert result.returncode == 0, result.stderr
    return result, json.loads(report.read_text())


def test_kernel_builder_upload_sends_binaries_through_lfs_and_every_client_loads_them(
        kernel_builder, lfs_hub, padded_kernel, tmp_path):  # noqa: F811
    variant = variant_of(padded_kernel)
    libraries = {p.name: sha256(p) for p in variant.glob("*.so")}
    assert len(libraries) == 2
    result, report = upload(kernel_builder, lfs_hub, padded_kernel, tmp_path / "up")
    assert report["status"] == "uploaded"
    assert "with Git LFS" in result.stdout + result.stderr
    assert set(libraries.values()) <= stored_objects(lfs_hub, REPO)

    # The tree holds pointers for the libraries, a regular blob for the rest.
    tree = run_client(lfs_hub, tmp_path / "hf", f"""
        import json
        from huggingface_hub import HfApi
        files = HfApi().list_repo_tree({REPO!r}, repo_type="kernel", revision="v1", recursive=True)
        print(json.dumps({{f.path: f.lfs.sha256 if f.lfs else None
                          for f in files if hasattr(f, "blob_id")}}))
    """)
    for name, digest in libraries.items():
        assert tree[f"build/{variant.name}/{name}"] == digest
    assert tree[f"build/{variant.name}/metadata.json"] is None

    # huggingface_hub downloads the bytes kernel-builder sent.
    downloaded = run_client(lfs_hub, tmp_path / "hf", f"""
        import hashlib, json
        from pathlib import Path
        from huggingface_hub import snapshot_download
        root = Path(snapshot_download({REPO!r}, repo_type="kernel", revision="v1"))
        print(json.dumps({{str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                          for p in root.rglob("*") if p.is_file()}}))
    """)
    for path in variant.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            assert downloaded[f"build/{variant.name}/{path.relative_to(variant)}"] == sha256(path)

    assert load_both(lfs_hub, tmp_path, REPO) == {"kernels": True, "kernelhub": True}
    for package in ("kernels", "kernelhub"):
        assert set(libraries.values()) <= cache_blob_names(tmp_path / package, REPO), package

    # Unchanged LFS files are recognised by their sha256: nothing to send the second time.
    _, again = upload(kernel_builder, lfs_hub, padded_kernel, tmp_path / "up")
    assert again["status"] == "no_changes"


def test_legacy_lock_hashes_lfs_files_by_their_sha256_as_the_tree_lists_them(
        kernel_builder, kernelhub_bin, lfs_hub, padded_kernel, tmp_path):  # noqa: F811
    """kernels.lock's git_lfs_concat takes `lfs.oid` for an LFS file (hub-api.md §2.3): our
    lock of the kernel kernel-builder uploaded equals the hash recomputed in Python from
    huggingface_hub's tree listing, and `kernelhub download` of the project checks the
    downloaded libraries against it."""
    upload(kernel_builder, lfs_hub, padded_kernel, tmp_path / "up")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\n\n'
        f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    env = client_env(lfs_hub, tmp_path / "lock-home")
    result = run([kernelhub_bin, "lock", project, "--legacy"], env=env)
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads((project / "kernels.lock").read_text())
    expected = run_client(lfs_hub, tmp_path / "hf", f"""
        import hashlib, json
        from huggingface_hub import HfApi
        from huggingface_hub.hf_api import RepoFile
        pairs, lfs = {{}}, 0
        for item in HfApi().list_repo_tree({REPO!r}, repo_type="kernel", revision={entry["sha"]!r},
                                           recursive=True):
            if isinstance(item, RepoFile) and item.path.startswith("build/torch"):
                parts = item.path.split("/")
                lfs += item.lfs is not None
                digest = item.lfs.sha256 if item.lfs else item.blob_id
                pairs.setdefault(parts[1], []).append(("/".join(parts[2:]).encode(), digest))
        hashes = {{}}
        for variant, files in pairs.items():
            m = hashlib.sha256()
            for path, digest in sorted(files):
                m.update(path)
                m.update(bytes.fromhex(digest))
            hashes[variant] = "sha256-" + m.hexdigest()
        print(json.dumps({{"hashes": hashes, "lfs": lfs}}))
    """)
    assert expected["lfs"] == 2
    assert {v: lock["hash"] for v, lock in entry["variants"].items()} == expected["hashes"]
    result = run([kernelhub_bin, "download", project, "--all-variants", "--json"], env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True


def peak_of(args, env) -> tuple[int, subprocess.CompletedProcess]:
    """Runs `args` in a child of a fresh interpreter and returns its peak resident set
    (ru_maxrss of the waited child, in bytes) with its result."""
    code = (
        "import json, resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps({'rc': r.returncode, 'out': r.stdout, 'err': r.stderr,\n"
        "  'peak': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))\n")
    result = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["rc"] == 0, outcome["err"]
    return outcome["peak"], outcome


def kernel_with(folder: Path, name: str, size: int) -> Path:
    """A hand-made kernel (no library to load) whose variant holds `name` of `size` bytes,
    sparse, with a few bytes at the end so a wrong offset changes its hash."""
    variant = folder / "build" / "torch-cpu"
    (variant / "relu").mkdir(parents=True)
    (folder / "build.toml").write_text(
        '[general]\nname = "relu"\nversion = 1\nbackends = ["cpu"]\nedition = 5\n'
        f'license = "apache-2.0"\n\n[general.hub]\nrepo-id = "{REPO}"\n\n[torch-noarch]\n')
    (variant / "metadata.json").write_text(json.dumps(
        {"name": "relu", "id": "_relu_lfs_big", "version": 1, "license": "apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "relu" / "__init__.py").write_text("")
    with (variant / name).open("wb") as f:
        f.truncate(size)
        f.seek(max(0, size - 3))
        f.write(b"end")
    return folder


def server_bytes_read(server) -> int:
    for line in Path(f"/proc/{server.process.pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/<pid>/io")


def blob_dir(home: Path) -> Path:
    return home / "hub" / ("kernels--" + REPO.replace("/", "--")) / "blobs"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_2_gib_through_lfs_with_bounded_client_memory_and_a_resumed_download(
        kernel_builder, kernelhub_bin, tmp_path):
    server = start_hub_server(kernelhub_bin, tmp_path)
    try:
        env = client_env(server, tmp_path / "home")
        small = kernel_with(tmp_path / "small", "weights.bin", 64 << 10)
        big = kernel_with(tmp_path / "big", "weights.bin", BIG_SIZE)
        upload_args = ["upload", "--no-check", "--branch", "v1"]
        small_peak, _ = peak_of([kernel_builder, *upload_args, small], env)
        big_peak, outcome = peak_of([kernel_builder, *upload_args, big], env)
        assert "with Git LFS" in outcome["out"] + outcome["err"]
        digest = sha256(big / "build" / "torch-cpu" / "weights.bin")
        assert digest in stored_objects(server, REPO)

        # kernelhub download of the same variant: a small-file download is the baseline.
        download = [kernelhub_bin, "download", REPO, "--revision", "v1", "--all-variants", "--json"]
        killed_home = tmp_path / "dl"
        dl_env = client_env(server, killed_home)
        process = subprocess.Popen([str(a) for a in download], env=dl_env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        partial = blob_dir(killed_home) / f"{digest}.incomplete"
        # Killed once a quarter of the blob is on disk (the poll only decides when; the
        # assertions below hold wherever the kill lands before the end).
        while process.poll() is None:
            if partial.exists() and partial.stat().st_size >= BIG_SIZE // 4:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
        process.wait()
        kept = partial.stat().st_size if partial.exists() else 0
        assert 0 < kept < BIG_SIZE, "the download was not caught before its end"

        # The second run asks for the rest only: the server reads (to send) about the bytes the
        # first run did not get, not the whole blob (its read count, rchar in /proc/<pid>/io;
        # socket sends do not count there, file reads do).
        sent_before = server_bytes_read(server)
        big_dl_peak, _ = peak_of(download, dl_env)
        resumed_bytes = server_bytes_read(server) - sent_before
        assert resumed_bytes < BIG_SIZE - kept + (16 << 20)
        blob = blob_dir(killed_home) / digest
        assert blob.stat().st_size == BIG_SIZE and sha256(blob) == digest
        assert not partial.exists()

        # Baseline: the same download command for the small kernel's blob.
        small_server = start_hub_server(kernelhub_bin, tmp_path, name="small-root")
        try:
            small_env = client_env(small_server, tmp_path / "small-home")
            peak_of([kernel_builder, *upload_args, small], small_env)
            small_dl_peak, _ = peak_of(download, client_env(small_server, tmp_path / "small-dl"))
        finally:
            stop_hub_server(small_server)
    finally:
        stop_hub_server(server)
    print(f"{BIG_SIZE >> 20} MiB through LFS: kernel-builder upload peak {big_peak >> 20} MiB "
          f"(small file {small_peak >> 20} MiB); kernelhub download peak {big_dl_peak >> 20} MiB "
          f"(small file {small_dl_peak >> 20} MiB), resumed from {kept >> 20} MiB, "
          f"{resumed_bytes >> 20} MiB read by the server for the rest")
    assert big_peak - small_peak < MAX_GROWTH
    assert big_dl_peak - small_dl_peak < MAX_GROWTH
