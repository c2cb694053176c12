# SPDX-License-Identifier: Apache-2.0
"""`resolve` by branch after the branch moved gives the new bytes at once (issue 25). The
server keeps the commit a branch points at per thread while the ref's files are unchanged
(repository_ref_cache.hpp), and only for a ref older than its settle time (2 s): the test
lets the ref age past it first, so the answers before each move do come from the cache, and
then moves the branch through the API, with git on the root (loose and packed), and reads
the file again on the same connection (one server thread, so one cache)."""
import json
import subprocess
import time
import urllib.parse
from http.client import HTTPConnection

from serve_helpers import Served, commit, http, start_serve, stop_serve

SETTLE_S = 2.5  # past the cache's 2 s settle time: setup, nothing is timed


def resolve(connection, path):
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    assert response.status == 200, body
    return body, response.getheader("X-Repo-Commit")


def test_a_moved_branch_is_resolved_at_once(kernelhub_bin, tmp_path):
    root, tokens = tmp_path / "root", tmp_path / "tokens"
    tokens.write_text("kh-token\n")
    root.mkdir()
    (root / "config.toml").write_text("[storage]\nlfs-threshold = false\n")
    process, url = start_serve(kernelhub_bin, root, "--token-file", tokens, "--threads", "1")
    try:
        server = Served(url, "kh-token")
        assert http(server, "POST", "/api/repos/create", json.dumps(
            {"organization": "m", "name": "k", "type": "kernel"}), token="kh-token",
            headers={"Content-Type": "application/json"})[0] == 200
        repo = root / "kernels" / "m" / "k.git"
        path = "/kernels/m/k/resolve/main/file.txt"
        netloc = urllib.parse.urlsplit(url).netloc
        connection = HTTPConnection(netloc, timeout=60)

        def git(*args):
            subprocess.run(["git", "--git-dir", str(repo), *args], check=True,
                           capture_output=True)

        def warm(expected):
            time.sleep(SETTLE_S)
            for _ in range(3):  # the first reads the ref, the others come from the cache
                assert resolve(connection, path)[0] == expected

        # Moved through the API: the commit renames a new loose ref over the old one.
        assert commit(server, "kernels/m/k", "main", {"file.txt": b"one\n"})[0] == 200
        warm(b"one\n")
        assert commit(server, "kernels/m/k", "main", {"file.txt": b"two\n"})[0] == 200
        assert resolve(connection, path)[0] == b"two\n"

        # Packed by git on the root (no loose ref left), then moved by the API over it.
        git("pack-refs", "--all", "--prune")
        assert not (repo / "refs" / "heads" / "main").exists()
        warm(b"two\n")
        assert commit(server, "kernels/m/k", "main", {"file.txt": b"three\n"})[0] == 200
        assert resolve(connection, path)[0] == b"three\n"

        # Moved back by git and packed again: only packed-refs changes.
        _, three = resolve(connection, path)
        git("pack-refs", "--all", "--prune")
        warm(b"three\n")
        git("update-ref", "refs/heads/main", f"{three}~1")
        git("pack-refs", "--all", "--prune")
        assert not (repo / "refs" / "heads" / "main").exists()
        body, sha = resolve(connection, path)
        assert body == b"two\n"
        assert sha != three
        connection.close()
    finally:
        stop_serve(process)
