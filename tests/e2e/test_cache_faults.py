# SPDX-License-Identifier: Apache-2.0
"""Faults the cache must survive: a download killed with SIGKILL resumes on the next run and
never leaves a partial blob under its final name; two processes (ours twice, or ours and
huggingface_hub) fetching one kernel at once transfer each blob once and both succeed; offline
with an empty cache fails clearly without touching the network."""
import hashlib
import json
import os
import select
import signal
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import run
from hub_cache_support import (VARIANT, ThrottlingProxy, hub_env, make_kernel, publish,
                               run_python)
from serve_helpers import Served, http

REPO = "kh-cache/big"
BIG = f"build/{VARIANT}/relu/big.bin"
BIG_BYTES = 24 * 1024 * 1024


@pytest.fixture
def published(hub_server, tmp_path_factory):
    folder = make_kernel(tmp_path_factory.mktemp("kernel"), big_bytes=BIG_BYTES)
    commit = publish(hub_server.url, hub_server.token, REPO, folder)
    return hub_server.url, commit, folder


def blob_dir(cache: Path) -> Path:
    return cache / "kernels--kh-cache--big" / "blobs"


def blob_is_valid(path: Path) -> bool:
    """A blob's bytes hash to its name (git blob sha1, or sha256 for LFS-style names)."""
    data = path.read_bytes()
    if len(path.name) == 64:
        return hashlib.sha256(data).hexdigest() == path.name
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == path.name


def assert_no_bad_blob(cache: Path):
    for blob in blob_dir(cache).iterdir():
        if not blob.name.endswith(".incomplete"):
            assert blob_is_valid(blob), f"{blob.name} holds wrong bytes"


def download_cmd(kernelhub_bin):
    return [str(kernelhub_bin), "download", REPO, "--revision", "main", "--json"]


def wait_for(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_a_killed_download_resumes_and_never_shows_a_partial_blob(published, kernelhub_bin, tmp_path):
    url, commit, folder = published
    cache = tmp_path / "hub"
    proxy = ThrottlingProxy(url, rate=4 * 1024 * 1024)
    env = dict(os.environ, **hub_env(proxy.url, cache))
    try:
        proc = subprocess.Popen(download_cmd(kernelhub_bin), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

        def partial_size():
            blobs = blob_dir(cache)
            parts = list(blobs.glob("*.incomplete")) if blobs.is_dir() else []
            return max((p.stat().st_size for p in parts), default=0)

        assert wait_for(lambda: partial_size() >= 2 * 1024 * 1024), "no partial file appeared"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kept = partial_size()
        assert 0 < kept < BIG_BYTES
        assert_no_bad_blob(cache)
        big_link = cache / "kernels--kh-cache--big" / "snapshots" / commit / BIG
        assert not big_link.exists()

        # The next run asks only for the missing bytes and finishes the blob.
        proxy.rate = 200 * 1024 * 1024
        down_before = proxy.bytes_down
        result = run(download_cmd(kernelhub_bin), env=hub_env(proxy.url, cache))
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["commit"] == commit
        assert any(f"bytes={kept}-" in headers for headers in proxy.ranges())
        assert proxy.bytes_down - down_before < BIG_BYTES - kept + 1024 * 1024
        assert big_link.read_bytes() == (folder / BIG).read_bytes()
        assert not list(blob_dir(cache).glob("*.incomplete"))
        assert_no_bad_blob(cache)
    finally:
        proxy.close()


def start_ours(kernelhub_bin, env):
    return subprocess.Popen(download_cmd(kernelhub_bin), env=dict(os.environ, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_of_our_processes_transfer_each_blob_once(published, kernelhub_bin, tmp_path):
    url, commit, folder = published
    cache = tmp_path / "hub"
    proxy = ThrottlingProxy(url, rate=8 * 1024 * 1024)
    try:
        env = hub_env(proxy.url, cache)
        procs = [start_ours(kernelhub_bin, env) for _ in range(2)]
        outputs = [p.communicate(timeout=600) for p in procs]
    finally:
        proxy.close()
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    paths = {json.loads(out)["path"] for out, _ in outputs}
    assert len(paths) == 1
    # The big blob is an LFS file: its bytes come from the signed download URL the resolve
    # redirects to, named by the sha256.
    oid = hashlib.sha256((folder / BIG).read_bytes()).hexdigest()
    assert proxy.gets(f"/.kernelhub/lfs/kernels/{REPO}/{oid}") == 1
    downloaded = sorted(json.loads(out)["downloaded"] for out, _ in outputs)
    # The variant's five distinct blobs (the empty file included) were stored once in all.
    assert downloaded[0] + downloaded[1] == 5
    assert (Path(paths.pop()) / "relu" / "big.bin").read_bytes() == (folder / BIG).read_bytes()
    assert_no_bad_blob(cache)


def test_ours_and_huggingface_hub_at_once_transfer_the_big_blob_once(published, kernelhub_bin,
                                                                      tmp_path):
    url, commit, folder = published
    cache = tmp_path / "hub"
    # Slow enough (about 6 s for the big blob) that huggingface_hub arrives mid-transfer.
    proxy = ThrottlingProxy(url, rate=4 * 1024 * 1024)
    try:
        env = hub_env(proxy.url, cache)
        ours = start_ours(kernelhub_bin, env)
        theirs = run_python(f"""
            from huggingface_hub import snapshot_download
            print(snapshot_download({REPO!r}, repo_type="kernel", revision="main",
                                    allow_patterns=["build/{VARIANT}/*"]))
        """, env)
        out, err = ours.communicate(timeout=600)
    finally:
        proxy.close()
    assert ours.returncode == 0, err
    assert json.loads(out)["path"].startswith(theirs.stdout.strip())
    # The big blob is an LFS file: its bytes come from the signed download URL the resolve
    # redirects to, named by the sha256.
    oid = hashlib.sha256((folder / BIG).read_bytes()).hexdigest()
    assert proxy.gets(f"/.kernelhub/lfs/kernels/{REPO}/{oid}") == 1
    assert_no_bad_blob(cache)


def test_offline_with_an_empty_cache_fails_clearly_without_network(kernelhub_bin, tmp_path):
    # A listening socket that never accepts: any connection attempt would queue on it.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    cache = tmp_path / "hub"
    env = hub_env(endpoint, cache, HF_HUB_OFFLINE=1)
    try:
        by_revision = run([kernelhub_bin, "download", "kh-cache/absent", "--revision", "main"], env=env)
        by_version = run([kernelhub_bin, "download", "kh-cache/absent", "--version", "1"], env=env)
        versions = run([kernelhub_bin, "versions", "kh-cache/absent"], env=env)
        readable, _, _ = select.select([listener], [], [], 0.2)
    finally:
        listener.close()
    assert by_revision.returncode != 0
    assert 'revision "main" of kernel repository "kh-cache/absent"' in by_revision.stderr
    assert "offline mode is on (HF_HUB_OFFLINE)" in by_revision.stderr
    assert by_version.returncode != 0
    assert ("Version 1 of 'kh-cache/absent' is not available in the local cache and Hugging "
            "Face Hub is in offline mode") in by_version.stderr
    assert versions.returncode == 0
    assert versions.stdout == "Repository does not support kernel versions: kh-cache/absent\n"
    assert not readable, "a connection reached the endpoint in offline mode"
    assert not cache.exists() or not any(cache.rglob("blobs/*"))



def lfs_object_path(url: str, commit: str) -> str:
    """The path of the big blob's LFS download, from the resolve's redirect."""
    status, headers, _ = http(Served(url), "HEAD", f"/kernels/{REPO}/resolve/{commit}/{BIG}",
                              follow=False)
    assert status in (301, 302, 307), status
    return urllib.parse.urlsplit(urllib.parse.urljoin(url, headers["Location"])).path


@pytest.mark.parametrize("hang_up", ["reset", "close", "shutdown"])
def test_a_reader_that_hangs_up_mid_object_leaves_the_server_serving(published, hang_up):
    """The server sends LFS objects with sendfile(2), which raises SIGPIPE on a socket whose
    peer has gone unless the process ignores it: a killed download once ended the server."""
    url, commit, folder = published
    address = urllib.parse.urlsplit(url)
    path = lfs_object_path(url, commit)
    for _ in range(5):
        sock = socket.create_connection((address.hostname, address.port), timeout=20)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 10)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert sock.recv(4096)
        if hang_up == "reset":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            sock.close()
        elif hang_up == "close":
            sock.close()
        else:
            sock.shutdown(socket.SHUT_RDWR)
            time.sleep(0.5)
            sock.close()
        time.sleep(0.3)
    assert http(Served(url), "GET", f"/api/kernels/{REPO}/revision/{commit}")[0] == 200
