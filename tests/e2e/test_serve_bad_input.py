# SPDX-License-Identifier: Apache-2.0
"""Hostile and broken requests to `kernelhub serve`: each gets a clear 4xx and leaves the
repository as it was (issue 5's bad-input and fault acceptance)."""
import base64
import json
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

from serve_helpers import commit, http


@pytest.fixture
def repo(hub_server):
    status, _, body = http(hub_server, "POST", "/api/repos/create",
                           json.dumps({"name": "k", "organization": "org", "type": "kernel"}),
                           token=hub_server.token)
    assert status == 200, body
    assert commit(hub_server, "kernels/org/k", "main", {"a.txt": b"a"})[0] == 200
    return hub_server


def refs(server):
    status, _, body = http(server, "GET", "/api/kernels/org/k/refs")
    assert status == 200
    return json.loads(body)


def assert_refused(response, status):
    code, headers, body = response
    assert code == status, body
    assert headers["X-Error-Message"], "every refusal says why"
    assert isinstance(json.loads(body)["error"], str)


@pytest.mark.parametrize("path", [
    "/api/kernels/org/..%2F..%2F..%2Fetc",
    "/api/kernels/..%2F..%2Fetc/passwd",
    "/kernels/org/k/resolve/..%2F..%2Fconfig/a.txt",
    "/kernels/org/k/resolve/main/..%2F..%2F..%2Fconfig.toml",
    "/kernels/org/k/resolve/main/a/../../../config.toml",
    "/kernels/org/k/resolve/main/.git%2Fconfig",
    "/kernels/org/k/resolve/main/%2Fetc%2Fpasswd",
    "/api/kernels/org/k/tree/main/..%2F..",
    "/kernels/org/k/resolve/main/a%00b",
])
def test_traversal_is_refused(repo, path):
    code, headers, body = http(repo, "GET", path)
    assert 400 <= code < 500, (path, code, body)
    assert b"root:" not in body


def test_writes_without_or_with_a_wrong_token_change_nothing(repo):
    before = refs(repo)
    for token in (None, "wrong"):
        code, headers, _ = commit(repo, "kernels/org/k", "main", {"b.txt": b"b"}, token=token)
        assert code == 401
        assert_refused(http(repo, "POST", "/api/kernels/org/k/branch/x", "{}", token=token), 401)
        assert_refused(http(repo, "POST", "/api/repos/create",
                            json.dumps({"name": "n", "organization": "org"}), token=token), 401)
    assert refs(repo) == before
    assert not (repo.root / "models" / "org" / "n.git").exists()


@pytest.mark.parametrize("body", [
    "not json at all\n",
    '{"key": "header", "value": {"summary": "s"}}\n{"key": "file", "value": {"path": "x"',
    '{"key": "file", "value": {"path": "x", "content": ""}}\n',
    '{"key": "header", "value": {"summary": "s"}}\n'
    '{"key": "file", "value": {"path": "../../x", "content": ""}}\n',
    '{"key": "header", "value": {"summary": "s"}}\n'
    '{"key": "file", "value": {"path": "ok.txt", "content": "%%%"}}\n',
    '{"key": "header", "value": {"summary": "s"}}\n'
    '{"key": "lfsFile", "value": {"path": "w.bin", "algo": "sha256", "oid": "ab", "size": 2}}\n',
])
def test_malformed_ndjson_is_refused_whole(repo, body):
    before = refs(repo)
    assert_refused(http(repo, "POST", "/api/kernels/org/k/commit/main", body,
                        token=repo.token), 400)
    assert refs(repo) == before


def test_a_bad_line_after_good_ones_commits_nothing(repo):
    before = refs(repo)
    good = base64.b64encode(b"fine").decode()
    body = "\n".join([
        json.dumps({"key": "header", "value": {"summary": "s"}}),
        json.dumps({"key": "file", "value": {"path": "good.txt", "content": good}}),
        json.dumps({"key": "deletedFile", "value": {"path": "not-there.txt"}}),
    ])
    code, headers, _ = http(repo, "POST", "/api/kernels/org/k/commit/main", body,
                            token=repo.token)
    assert code == 404 and headers["X-Error-Code"] == "EntryNotFound"
    assert refs(repo) == before


def test_malformed_json_and_stale_parent(repo):
    before = refs(repo)
    assert_refused(http(repo, "POST", "/api/repos/create", "{nope", token=repo.token), 400)
    assert_refused(http(repo, "POST", "/api/kernels/org/k/preupload/main", "[1, 2]",
                        token=repo.token), 400)
    stale = json.dumps({"key": "header", "value": {"summary": "s", "parentCommit": "0" * 40}})
    assert_refused(http(repo, "POST", "/api/kernels/org/k/commit/main", stale,
                        token=repo.token), 412)
    assert refs(repo) == before


def test_oversized_body_gets_413_before_it_is_read(repo):
    host, port = urllib.parse.urlsplit(repo.url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"POST /api/kernels/org/k/commit/main HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + repo.token.encode() +
                     b"\r\nContent-Length: 99999999999\r\n\r\n")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert refs(repo) == refs(repo)


def test_sigkill_during_a_large_commit_leaves_a_consistent_repository(repo):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_dir = repo.root / "kernels" / "org" / "k.git"
    before = refs(repo)["branches"][0]["targetCommit"]
    objects_before = sum(1 for _ in (git_dir / "objects").rglob("*") if _.is_file())
    # Text files of 256 KiB: inline content the hub stores as git blobs while it parses the
    # body (binary or *.bin files would be refused at once: they go through LFS).
    lines = [json.dumps({"key": "header", "value": {"summary": "big"}})]
    for i in range(120):
        content = base64.b64encode(f"{i:03}\n".encode() * (64 << 10)).decode()
        lines.append(json.dumps({"key": "file", "value": {"path": f"big/{i:03}.txt",
                                                          "content": content}}))
    body = "\n".join(lines) + "\n"

    def send():
        try:
            http(repo, "POST", "/api/kernels/org/k/commit/main", body, token=repo.token)
        except OSError:
            pass  # the server died under it, as intended

    sender = threading.Thread(target=send)
    sender.start()
    # Kill once the server is writing the commit's objects (or after 60 s, whatever it does).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        written = sum(1 for _ in (git_dir / "objects").rglob("*") if _.is_file())
        if written >= objects_before + 10:
            break
        time.sleep(0.01)
    repo.process.send_signal(signal.SIGKILL)
    # The kill came once the commit's blobs were being written (or after them), not to an
    # idle server that had refused the commit.
    assert written >= objects_before + 10, (objects_before, written)
    repo.process.wait()
    sender.join(timeout=120)
    fsck = subprocess.run(["git", "--git-dir", str(git_dir), "fsck", "--no-dangling"],
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    head = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "refs/heads/main"],
                          capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only",
                           head], capture_output=True, text=True, check=True).stdout.split()
    if head == before:
        assert tree == [".gitattributes", "a.txt"]
    else:
        assert len(tree) == 122  # the whole commit or nothing
