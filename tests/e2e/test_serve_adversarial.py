# SPDX-License-Identifier: Apache-2.0
"""Issue 12's adversarial cases against a real `kernelhub serve` (loopback only, each bounded
in time): one or more cases per defect class of the server, each of which failed before the
fix. Raw sockets where the HTTP client libraries would not send the bytes we need."""
import base64
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from serve_helpers import bytes_read_after_a_stall, commit, http, run_client


def create(server, name="k", private=False):
    body = {"name": name, "organization": "org", "type": "kernel"}
    if private:
        body["private"] = True
    status, _, answer = http(server, "POST", "/api/repos/create", json.dumps(body),
                             token=server.token)
    assert status == 200, answer


@pytest.fixture
def repo(hub_server):
    create(hub_server)
    assert commit(hub_server, "kernels/org/k", "main", {"a.txt": b"abcd"})[0] == 200
    return hub_server


def refs(server):
    status, _, body = http(server, "GET", "/api/kernels/org/k/refs", token=server.token)
    assert status == 200, body
    return json.loads(body)


def raw_commit(server, content, path="weights.bin"):
    body = "\n".join([
        json.dumps({"key": "header", "value": {"summary": "s"}}),
        json.dumps({"key": "file", "value": {"path": path, "encoding": "base64",
                                             "content": content}}),
    ]) + "\n"
    return http(server, "POST", "/api/kernels/org/k/commit/main", body, token=server.token)


# Item 4: base64 is decoded strictly (RFC 4648); the refusal names the file.
@pytest.mark.parametrize("content", ["====", "A===", "QQ==QUJD", "QR=="])
def test_lax_base64_is_refused_naming_the_file(repo, content):
    before = refs(repo)
    status, headers, body = raw_commit(repo, content)
    assert status == 400, body
    assert "weights.bin" in headers["X-Error-Message"]
    assert refs(repo) == before


# Item 5: names git and the Hub refuse.
@pytest.mark.parametrize("path", ["notes\\readme.txt", "..\\..\\x"])
def test_file_names_with_backslashes_are_refused(repo, path):
    before = refs(repo)
    status, _, body = raw_commit(repo, base64.b64encode(b"x").decode(), path=path)
    assert status == 400, body
    assert refs(repo) == before


@pytest.mark.parametrize("kind, name", [
    ("branch", "HEAD"), ("branch", "refs%2Fheads%2Fz"), ("branch", "-x"), ("tag", "-x"),
    ("tag", "HEAD"), ("tag", "refs/tags/t"),
])
def test_ref_names_git_refuses_are_refused(repo, kind, name):
    before = refs(repo)
    if kind == "branch":
        response = http(repo, "POST", f"/api/kernels/org/k/branch/{name}", "{}",
                        token=repo.token)
    else:
        response = http(repo, "POST", "/api/kernels/org/k/tag/main", json.dumps({"tag": name}),
                        token=repo.token)
    assert response[0] == 400, response[2]
    assert refs(repo) == before


def test_negative_tree_cursor_is_refused(repo):
    assert http(repo, "GET", "/api/kernels/org/k/tree/main?cursor=-1")[0] == 400


# Item 6: private repositories are invisible to readers without a token.
def test_private_repositories_are_hidden_and_answer_404(repo):
    create(repo, "secret-kernel", private=True)
    status, _, page = http(repo, "GET", "/")
    assert status == 200 and b"org/k" in page
    assert b"secret-kernel" not in page
    assert b"secret-kernel" in http(repo, "GET", "/", token=repo.token)[2]
    for path in ("/api/kernels/org/secret-kernel", "/api/kernels/org/secret-kernel/refs",
                 "/kernels/org/secret-kernel/resolve/main/.gitattributes"):
        hidden = http(repo, "GET", path)
        missing = http(repo, "GET", path.replace("secret-kernel", "no-such-kernel"))
        assert hidden[0] == missing[0] == 404, (path, hidden[2])
        assert hidden[1]["X-Error-Code"] == missing[1]["X-Error-Code"] == "RepoNotFound"


# Item 7: leftovers of a killed run, and config.toml read again while serving.
def start_server(kernelhub_bin, root, token_file=None, *extra):
    args = [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", *extra]
    if token_file:
        args += ["--token-file", str(token_file)]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        pytest.fail(f"kernelhub serve did not start: {process.stderr.read()}")
    return process, url


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_leftover_temporary_objects_are_removed_at_start(repo, kernelhub_bin, tmp_path):
    objects = repo.root / "kernels" / "org" / "k.git" / "objects"
    leftover = objects / "tmp_object_git2_Zq81xa"
    leftover.write_bytes(b"\0" * 4096)
    half_made = repo.root / "kernels" / "org" / ".tmp-new-0badc0de0001"
    (half_made / "objects").mkdir(parents=True)
    # Killed, as the run that left them was (a server still running holds the root).
    repo.process.kill()
    repo.process.wait()
    process, _ = start_server(kernelhub_bin, repo.root)
    try:
        assert not leftover.exists()
        assert not half_made.exists()
        assert any(objects.iterdir()), "real objects stay"
    finally:
        stop(process)
    assert "removed 2 leftover" in process.stderr.read()


def overview(url, org):
    request = urllib.request.Request(f"{url}/api/organizations/{org}/overview")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        return {"status": error.code}


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_config_toml_is_read_again_when_it_changes_and_on_sighup(kernelhub_bin, tmp_path):
    root = tmp_path / "root"
    (root / "kernels" / "acme").mkdir(parents=True)
    config = root / "config.toml"
    config.write_text("[organizations.acme]\ntrustedKernelPublisher = false\n")
    process, url = start_server(kernelhub_bin, root)
    try:
        assert overview(url, "acme")["trustedKernelPublisher"] is False
        # An edit is seen within the check interval (1 s), no signal needed.
        # (a trailing space, so "false" below has the same size)
        config.write_text("[organizations.acme]\ntrustedKernelPublisher = true \n")
        assert wait_for(lambda: overview(url, "acme").get("trustedKernelPublisher") is True, 5)
        # SIGHUP reads it even when the stamp looks the same (same size, mtime put back).
        stamp = config.stat()
        with open(config, "r+") as handle:
            handle.write("[organizations.acme]\ntrustedKernelPublisher = false\n")
        assert config.stat().st_size == stamp.st_size
        os.utime(config, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        time.sleep(1.5)
        assert overview(url, "acme")["trustedKernelPublisher"] is True, "no reload without a cue"
        process.send_signal(signal.SIGHUP)
        assert wait_for(lambda: overview(url, "acme").get("trustedKernelPublisher") is False, 5)
        # A broken edit keeps the settings in force and says why.
        config.write_text("[organizations.acme\n")
        time.sleep(1.5)
        assert overview(url, "acme")["trustedKernelPublisher"] is False
        assert process.poll() is None
    finally:
        stop(process)
    assert "error: config.toml was not read, its previous settings stay in force" \
        in process.stderr.read()


# Raw sockets: the framing and timing cases need bytes no HTTP client library sends.
def address(server_or_url):
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    host, port = urllib.parse.urlsplit(url).netloc.rsplit(":", 1)
    return host, int(port)


def connect(url, source="127.0.0.1", timeout=10):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(address(url))
    return sock


def exchange(url, data, timeout=10, source="127.0.0.1"):
    """Sends `data` on a fresh connection; returns every byte until the server closes."""
    with connect(url, source, timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else None


def body_of(answer):
    return answer.split(b"\r\n\r\n", 1)[1]


def closed_within(sock, seconds):
    """True when the server closes `sock` (EOF or reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


# Item 3: framing and ranges.
def test_two_different_content_lengths_are_refused(repo):
    answer = exchange(repo.url,
                      b"POST /api/validate-yaml HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                      b"Content-Length: 5\r\nConnection: close\r\n\r\n{}xyz")
    assert status_of(answer) == 400, answer


@pytest.mark.parametrize("length", [b"-5", b"5x", b"0x10", b"99999999999999999999999"])
def test_malformed_content_length_gets_400(repo, length):
    answer = exchange(repo.url,
                      b"POST /api/validate-yaml HTTP/1.1\r\nHost: x\r\nContent-Length: " + length +
                      b"\r\nConnection: close\r\n\r\n")
    assert status_of(answer) == 400, answer


@pytest.mark.parametrize("spec", ["bytes=5-3", "items=0-3", "bytes=abc", "bytes=-", "bytes=1-2,x"])
def test_invalid_range_is_ignored(repo, spec):
    for path in ("/", "/api/kernels/org/k", "/kernels/org/k/resolve/main/a.txt"):
        answer = exchange(repo.url, f"GET {path} HTTP/1.1\r\nHost: x\r\nRange: {spec}\r\n"
                                    "Connection: close\r\n\r\n".encode())
        assert status_of(answer) == 200, (path, spec, answer[:200])
    assert body_of(answer) == b"abcd"


def test_only_a_valid_unsatisfiable_range_gets_416(repo):
    path = "/kernels/org/k/resolve/main/a.txt"
    assert http(repo, "GET", path, headers={"Range": "bytes=10-20"})[0] == 416
    status, headers, body = http(repo, "GET", path, headers={"Range": "bytes=1-2"})
    assert (status, body, headers["Content-Range"]) == (206, b"bc", "bytes 1-2/4")


# Item 1: authorization from the head, before any body byte; bodies capped and spooled.
BIG_COMMIT_HEAD = (b"POST /api/kernels/org/k/commit/main HTTP/1.1\r\nHost: x\r\n"
                   b"Content-Type: application/x-ndjson\r\nContent-Length: 209715200\r\n")


@pytest.mark.parametrize("auth, status", [(b"", 401), (b"Authorization: Bearer wrong\r\n", 401)])
def test_unauthorized_commit_is_answered_before_its_body(repo, auth, status):
    with connect(repo.url) as sock:
        sock.sendall(BIG_COMMIT_HEAD + auth + b"\r\n")
        answer = sock.recv(65536)  # no body byte was sent: the answer must not wait for one
    assert status_of(answer) == status, answer


def test_read_only_server_refuses_writes_before_their_body(kernelhub_bin, tmp_path):
    process, url = start_server(kernelhub_bin, tmp_path / "root")
    try:
        with connect(url) as sock:
            sock.sendall(BIG_COMMIT_HEAD + b"Authorization: Bearer any\r\n\r\n")
            assert status_of(sock.recv(65536)) == 403
    finally:
        stop(process)


def test_unauthorized_big_bodies_are_not_buffered(repo):
    """Four clients push 64 MiB each without a token: each gets its 401 and is cut off, and
    the server's peak resident memory does not grow by their size (it grew by all of it)."""
    def peak_rss_kib():
        with open(f"/proc/{repo.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))

    before = peak_rss_kib()
    chunk = b"x" * (1 << 20)
    for _ in range(4):
        with connect(repo.url, timeout=10) as sock:
            sock.sendall(BIG_COMMIT_HEAD.replace(b"209715200", b"67108864") + b"\r\n")
            sent = 0
            try:
                for _ in range(64):
                    sock.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                pass  # the server closed after its answer
    grown = peak_rss_kib() - before
    print(f"peak RSS growth over 4 unauthenticated 64 MiB bodies: {grown} KiB")
    assert grown < 32 * 1024, f"the server's peak RSS grew by {grown} KiB"


def test_commit_bodies_are_capped_and_spooled_files_removed(kernelhub_bin, tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text("t0k\n")
    root = tmp_path / "root"
    process, url = start_server(kernelhub_bin, root, token_file, "--max-body-mib", "1")
    try:
        server = type("S", (), {"url": url, "token": "t0k", "root": root})()
        create(server)
        # Under the cap: committed through the spool file, which is gone after.
        # (text: a binary would have to come through LFS)
        assert commit(server, "kernels/org/k", "main",
                      {"w.txt": os.urandom(300 << 10).hex().encode()})[0] == 200
        assert list((root / ".kernelhub-spool").iterdir()) == []
        # Over it, announced: 413 before the body.
        with connect(url) as sock:
            sock.sendall(b"POST /api/kernels/org/k/commit/main HTTP/1.1\r\nHost: x\r\n"
                         b"Authorization: Bearer t0k\r\nContent-Length: 2097152\r\n\r\n")
            assert status_of(sock.recv(65536)) == 413
        # Over it, chunked (no length announced): 413 once the cap is passed.
        with connect(url) as sock:
            sock.sendall(b"POST /api/kernels/org/k/commit/main HTTP/1.1\r\nHost: x\r\n"
                         b"Authorization: Bearer t0k\r\nTransfer-Encoding: chunked\r\n\r\n")
            answer = b""
            try:
                for _ in range(20):  # 1.25 MiB: past the cap, within what the server drains
                    sock.sendall(b"10000\r\n" + b"x" * 0x10000 + b"\r\n")
            except OSError:
                pass
            answer = sock.recv(65536)
            assert status_of(answer) == 413, answer
    finally:
        stop(process)


# Item 2: slow and idle clients cost a socket each, never a thread.
def start_dripping(url, sources, per_source):
    """Opens connections that send a request head one byte at a time, forever."""
    socks = []
    for source in sources:
        for _ in range(per_source):
            sock = connect(url, source)
            sock.setblocking(False)
            socks.append(sock)
    return socks


def drip(socks, rounds, pause):
    for _ in range(rounds):
        for sock in socks:
            try:
                sock.send(b"X")
            except OSError:
                pass
        time.sleep(pause)


def timed_get(url, path, source="127.0.0.1"):
    start = time.monotonic()
    answer = exchange(url, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                      .encode(), timeout=20, source=source)
    return status_of(answer), time.monotonic() - start


def test_a_thousand_idle_and_dripping_connections_do_not_lock_others_out(repo):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    path = "/api/kernels/org/k"
    baseline = min(timed_get(repo.url, path)[1] for _ in range(5))
    # 500 idle (connected, nothing sent) and 500 sending a head one byte at a time, from ten
    # loopback addresses so the per-peer cap (256) is not what limits them.
    idle = start_dripping(repo.url, [f"127.0.0.{i}" for i in range(2, 7)], 100)
    dripping = start_dripping(repo.url, [f"127.0.0.{i}" for i in range(7, 12)], 100)
    try:
        for sock in dripping:
            sock.send(b"GET / HTTP/1.1\r\nHost: x\r\n")
        drip(dripping, 2, 0.2)
        delays = []
        for _ in range(5):
            status, delay = timed_get(repo.url, path)
            assert status == 200
            delays.append(delay)
            drip(dripping, 1, 0.1)
    finally:
        for sock in idle + dripping:
            sock.close()
    print(f"1,000 slow connections: request took {min(delays) * 1000:.1f} ms best, "
          f"{max(delays) * 1000:.1f} ms worst (baseline {baseline * 1000:.1f} ms)")


def test_a_dripped_head_is_cut_at_the_head_timeout(kernelhub_bin, tmp_path):
    process, url = start_server(kernelhub_bin, tmp_path / "root", None, "--head-timeout", "1")
    try:
        with connect(url) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\n")
            start = time.monotonic()
            closed = False
            while time.monotonic() - start < 5 and not closed:
                try:
                    sock.sendall(b"X")
                except OSError:
                    closed = True
                    break
                closed = closed_within(sock, 0.3)
            assert closed, "the server still holds a head dripped for 5 s"
            assert time.monotonic() - start < 4
    finally:
        stop(process)


def test_idle_keep_alive_connections_are_closed(kernelhub_bin, tmp_path):
    process, url = start_server(kernelhub_bin, tmp_path / "root", None, "--idle-timeout", "1")
    try:
        with connect(url) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert status_of(sock.recv(65536)) == 200
            assert closed_within(sock, 4)
    finally:
        stop(process)


def test_connections_per_peer_are_capped(kernelhub_bin, tmp_path):
    process, url = start_server(kernelhub_bin, tmp_path / "root", None,
                                "--max-connections-per-peer", "4")
    held = []
    try:
        held = [connect(url, "127.0.0.2") for _ in range(4)]
        time.sleep(0.2)  # let the server accept them
        with connect(url, "127.0.0.2") as extra:
            try:
                extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = extra.recv(65536)
            except ConnectionResetError:
                answer = b""
            assert status_of(answer) in (503, None), answer
            assert closed_within(extra, 4)
        assert timed_get(url, "/", source="127.0.0.3")[0] == 200
    finally:
        for sock in held:
            sock.close()
        stop(process)


def test_sigterm_stops_the_server_with_idle_and_dripping_clients(kernelhub_bin, tmp_path):
    process, url = start_server(kernelhub_bin, tmp_path / "root")
    idle = connect(url)
    dripping = connect(url)
    try:
        dripping.sendall(b"GET / HTTP/1.1\r\nHo")
        time.sleep(0.2)
        start = time.monotonic()
        process.send_signal(signal.SIGTERM)
        for _ in range(10):
            if process.poll() is not None:
                break
            try:
                dripping.sendall(b"s")
            except OSError:
                pass
            time.sleep(0.3)
        process.wait(timeout=5)
        print(f"SIGTERM with an idle and a dripping client: exited in "
              f"{(time.monotonic() - start) * 1000:.0f} ms")
        assert process.returncode == 0
    finally:
        idle.close()
        dripping.close()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_dripped_body_is_cut_at_the_transfer_deadline(kernelhub_bin, tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text("t0k\n")
    process, url = start_server(kernelhub_bin, tmp_path / "root", token_file,
                                "--transfer-timeout", "1", "--min-rate-kib", "1024")
    try:
        with connect(url) as sock:
            # 1,000 bytes announced: 1 s plus 1,000 bytes at 1 MiB/s to send them.
            sock.sendall(b"POST /api/repos/create HTTP/1.1\r\nHost: x\r\n"
                         b"Authorization: Bearer t0k\r\nContent-Length: 1000\r\n\r\n{")
            start = time.monotonic()
            closed = False
            while time.monotonic() - start < 6 and not closed:
                try:
                    sock.sendall(b" ")
                except OSError:
                    break
                closed = closed_within(sock, 0.3)
            elapsed = time.monotonic() - start
            assert elapsed < 4, f"a body dripped for {elapsed:.1f} s was still being read"
    finally:
        stop(process)


def test_expect_continue_is_answered_only_for_admitted_bodies(repo):
    body = b'{"name": "c", "organization": "org", "type": "kernel"}'
    head = (b"POST /api/repos/create HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n")
    with connect(repo.url) as sock:
        sock.sendall(head + b"Authorization: Bearer " + repo.token.encode() + b"\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        assert status_of(sock.recv(65536)) == 200
    with connect(repo.url) as sock:
        sock.sendall(head + b"\r\n")
        assert status_of(sock.recv(65536)) == 401  # the final answer, no 100 first


def test_a_reader_that_stalls_is_cut_at_the_transfer_deadline(kernelhub_bin, tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text("t0k\n")
    # LFS off: the 16 MiB file is stored in git, so the stalled read is of the server's own
    # inflating stream.
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "config.toml").write_text("[storage]\nlfs-threshold = false\n")
    process, url = start_server(kernelhub_bin, tmp_path / "root", token_file,
                                "--transfer-timeout", "1", "--min-rate-kib", "65536")
    try:
        server = type("S", (), {"url": url, "token": "t0k", "root": tmp_path / "root"})()
        create(server)
        size = 16 << 20  # far more than loopback's socket buffers hold
        assert commit(server, "kernels/org/k", "main", {"big.bin": b"\0" * size})[0] == 200
        with connect(url, timeout=20) as sock:
            # The answer's deadline (1 s + 16 MiB at 64 MiB/s) passes while nothing is read.
            received = bytes_read_after_a_stall(
                sock, b"GET /kernels/org/k/resolve/main/big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        assert received < size, "the whole answer waited for a reader that stalled"
    finally:
        stop(process)


def test_a_reader_that_stalls_on_an_lfs_object_is_cut_at_the_transfer_deadline(kernelhub_bin,
                                                                                 tmp_path):
    # An LFS object goes out with sendfile(2), on the socket itself rather than through the
    # connection's stream and its deadline: the answer's own deadline must cut this reader too.
    token_file = tmp_path / "tokens"
    token_file.write_text("t0k\n")
    size = 16 << 20  # far more than loopback's socket buffers hold
    (tmp_path / "big.bin").write_bytes(os.urandom(size))  # binary: huggingface_hub sends it by LFS
    process, url = start_server(kernelhub_bin, tmp_path / "root", token_file)
    try:
        server = type("S", (), {"url": url, "token": "t0k", "root": tmp_path / "root"})()
        run_client(server, tmp_path / "home", f"""
            from huggingface_hub import HfApi
            api = HfApi()
            api.create_repo("org/k", repo_type="kernel")
            api.upload_file(path_or_fileobj={str(tmp_path / "big.bin")!r}, path_in_repo="big.bin",
                            repo_id="org/k", repo_type="kernel")
        """)
    finally:
        stop(process)
    # The same root again, now with a deadline of 1 s + 16 MiB at 64 MiB/s for the answer.
    process, url = start_server(kernelhub_bin, tmp_path / "root", token_file,
                                "--transfer-timeout", "1", "--min-rate-kib", "65536")
    try:
        server = type("S", (), {"url": url, "token": "t0k"})()
        status, headers, _ = http(server, "GET", "/kernels/org/k/resolve/main/big.bin",
                                  follow=False)
        assert status == 302, status
        location = urllib.parse.urlsplit(headers["Location"])
        assert location.path.startswith("/.kernelhub/lfs/"), headers["Location"]
        with connect(url, timeout=20) as sock:
            received = bytes_read_after_a_stall(
                sock, f"GET {location.path}?{location.query} HTTP/1.1\r\nHost: x\r\n\r\n"
                .encode())
        assert 0 < received < size, f"{received} bytes: the answer waited for a stalled reader"
    finally:
        stop(process)
