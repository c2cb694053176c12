# SPDX-License-Identifier: Apache-2.0
"""One `kernelhub serve` per root (issue 20 item 6). A second server on the same root used to
start, delete the first's spool folder (every commit of the first then failed with 500 until
it was restarted) and clear temporary git objects under it. Now it refuses to start, naming
the first's pid, and a spool folder removed under a running server is made again."""
import shutil
import subprocess

from serve_helpers import commit, http


def create(server, name):
    status, _, body = http(server, "POST", "/api/repos/create",
                           f'{{"organization": "org", "name": "{name}", "type": "kernel"}}',
                           token=server.token, headers={"Content-Type": "application/json"})
    assert status == 200, body


def test_a_second_server_on_the_same_root_refuses_to_start(hub_server, kernelhub_bin):
    create(hub_server, "k")
    assert commit(hub_server, "kernels/org/k", "main", {"a.txt": b"one"})[0] == 200
    objects = hub_server.root / "kernels" / "org" / "k.git" / "objects"
    in_flight = objects / "tmp_object_git2_live01"  # what a commit being written looks like
    in_flight.write_bytes(b"x" * 1024)
    second = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(hub_server.root), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = second.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        second.terminate()
        out, err = second.communicate()
        raise AssertionError(f"a second server started on the same root: {out} {err}")
    assert second.returncode != 0
    assert f"another kernelhub serve (pid {hub_server.process.pid}) is serving" in err, err
    assert out == ""
    # The first one lost nothing: its spool, the object being written, its commits.
    assert (hub_server.root / ".kernelhub-spool").is_dir()
    assert in_flight.exists()
    assert commit(hub_server, "kernels/org/k", "main", {"b.txt": b"two"})[0] == 200


def test_the_spool_folder_is_made_again_when_removed_under_a_running_server(hub_server):
    create(hub_server, "k")
    shutil.rmtree(hub_server.root / ".kernelhub-spool")
    status, _, body = commit(hub_server, "kernels/org/k", "main", {"a.txt": b"after"})
    assert status == 200, body
    assert http(hub_server, "GET", "/kernels/org/k/resolve/main/a.txt")[2] == b"after"


def test_the_root_is_free_again_once_the_server_stops(hub_server, kernelhub_bin):
    hub_server.process.terminate()
    hub_server.process.wait(timeout=10)
    again = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(hub_server.root), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert again.stdout.readline().startswith("http://")
    finally:
        again.terminate()
        again.wait(timeout=10)
