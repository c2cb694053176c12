# SPDX-License-Identifier: Apache-2.0
"""A Hub that means harm, for the client's adversarial tests (issue 12, items 8-10).

Standard library only, loopback only, and bounded: every endless answer stops after
`stream_limit` bytes, every looping answer after `loop_limit` requests, so a client that
does not defend itself makes a test fail (on a figure, or on its timeout) instead of filling
the machine. It speaks just enough of the Hub API (hub-api.md) for `kernelhub download` and
`get_kernel`: repo info by revision, refs, the recursive tree, the organisation overview and
resolve HEAD/GET. Each repository under the `hostile` organisation misbehaves in one way:

  hostile/gopher      resolve GET answers 302 to gopher://127.0.0.1:<sink>/ (a raw TCP port)
  hostile/file        resolve GET answers 302 to file:///<a local file with the announced bytes>
  hostile/overlong    the tree says 16 bytes; resolve GET sends bytes until the client stops
  hostile/endless     repo info is a JSON object that never ends
  hostile/headers     repo info is a status line followed by header lines that never end
  hostile/loop        the tree's `Link: rel="next"` names the page itself
  hostile/oddname     a loadable kernel plus `notes\\readme.txt` outside every variant
  hostile/token       resolve GET answers 302 to a second server (another origin)
  hostile/plain       the same loadable kernel, well behaved (for the blob-check test)
  hostile/longpaths   tree pages of 1,000 entries with 30,000-byte paths, each page linking to
                      a new one, 10 pages in all (a client without limits grows by GBs)
  hostile/wide        40 such pages of 4,000-byte paths (under any path limit): a listing that
                      only a byte budget stops

What each request received and how much each answer sent are kept in `stats` for the tests.
"""
from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

ORG = "hostile"
COMMIT = "1234567890abcdef1234567890abcdef12345678"
CHUNK = 1 << 20
# hostile/longpaths and hostile/wide: the length of every path on their tree pages, and how
# many pages they have.
WIDE_PATHS = {"longpaths": 30000, "wide": 4000}
WIDE_PAGES = {"longpaths": 10, "wide": 40}
WIDE_ENTRIES = 1000  # a page, as the Hub pages trees

VARIANT_FILES = {
    "build/torch-cpu/metadata.json": json.dumps(
        {"id": "_oddname_cpu_0a1b2c3", "name": "oddname", "version": 1,
         "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}),
    "build/torch-cpu/__init__.py": "from .ops import triple\n__all__ = ['triple']\n",
    "build/torch-cpu/ops.py": "def triple(x):\n    return x * 3\n",
}


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Stats:
    """What the hostile servers saw; every field is guarded by one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Authorization
        self.sent: dict[str, int] = {}  # repo name -> body bytes sent by streaming answers
        self.loop_pages = 0
        self.tree_pages: dict[str, int] = {}  # repo name -> tree pages served
        self.sink_connections = 0
        self.sink_bytes = 0

    def record(self, method: str, path: str, auth: str | None) -> None:
        with self.lock:
            self.requests.append((method, path, auth))

    def add_sent(self, name: str, count: int) -> None:
        with self.lock:
            self.sent[name] = self.sent.get(name, 0) + count


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class HostileHub:
    def __init__(self, workdir: Path, stream_limit: int = 256 << 20, loop_limit: int = 50):
        self.stats = Stats()
        self.stream_limit = stream_limit
        self.loop_limit = loop_limit
        self.secret = workdir / "secret.txt"
        self.secret.write_text("the local secret that must never be read\n")
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        # The raw TCP port the gopher redirect points at: it only counts what reaches it.
        self._sink = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sink.bind(("127.0.0.1", 0))
        self._sink.listen(8)
        self._sink.settimeout(0.2)
        self.sink_port = self._sink.getsockname()[1]
        self._hub = _Server(("127.0.0.1", 0), self._handler(main=True))
        self._cdn = _Server(("127.0.0.1", 0), self._handler(main=False))
        self.url = f"http://127.0.0.1:{self._hub.server_address[1]}"
        self.cdn_url = f"http://127.0.0.1:{self._cdn.server_address[1]}"

    # -- life cycle -------------------------------------------------------------------------

    def __enter__(self) -> "HostileHub":
        for target in (self._hub.serve_forever, self._cdn.serve_forever, self._drain_sink):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()
        self._hub.shutdown()
        self._cdn.shutdown()
        self._hub.server_close()
        self._cdn.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._sink.close()

    def _drain_sink(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._sink.accept()
            except (socket.timeout, OSError):
                continue
            with self.stats.lock:
                self.stats.sink_connections += 1
            conn.settimeout(1.0)
            try:
                while data := conn.recv(65536):
                    with self.stats.lock:
                        self.stats.sink_bytes += len(data)
            except OSError:
                pass
            conn.close()

    # -- the repositories -------------------------------------------------------------------

    def files_of(self, name: str) -> dict[str, bytes]:
        if name in ("oddname", "plain"):
            files = {path: text.encode() for path, text in VARIANT_FILES.items()}
            if name == "oddname":
                files["notes\\readme.txt"] = b"not part of any variant\n"
            return files
        if name == "overlong":
            return {"build/torch-cpu/big.bin": b"x" * 16}
        if name == "file":
            # The file the redirect names holds exactly the bytes the tree announces, so a
            # client that follows file:// "succeeds" with a local file in its cache.
            return {"build/torch-cpu/__init__.py": self.secret.read_bytes()}
        return {"build/torch-cpu/__init__.py": b"x = 1\n"}

    def _handler(self, main: bool):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep pytest's output clean
                pass

            def do_HEAD(self) -> None:
                self._route(head=True)

            def do_GET(self) -> None:
                self._route(head=False)

            # -- answers ------------------------------------------------------------------

            def _send(self, status: int, body: bytes = b"", headers: dict | None = None,
                      head: bool = False) -> None:
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _json(self, value, headers: dict | None = None, head: bool = False) -> None:
                self._send(200, json.dumps(value).encode(),
                           {"Content-Type": "application/json", **(headers or {})}, head)

            def _missing(self, head: bool) -> None:
                self._send(404, b'{"error":"not found"}',
                           {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT}, head)

            def _stream(self, name: str, first: bytes, filler: bytes) -> None:
                """An answer without Content-Length that sends until the client gives up or
                the limit is reached; the bytes that left are counted."""
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                sent = 0
                block = filler * (CHUNK // len(filler))
                try:
                    self.wfile.write(first)
                    sent += len(first)
                    while sent < hub.stream_limit:
                        self.wfile.write(block)
                        sent += len(block)
                except OSError:
                    pass
                hub.stats.add_sent(name, sent)

            def _endless_headers(self, name: str) -> None:
                """A status line, then header lines until the client gives up or the limit."""
                self.close_connection = True
                line = b"X-Filler: " + b"h" * 990 + b"\r\n"
                block = line * (CHUNK // len(line))
                sent = 0
                try:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    while sent < hub.stream_limit:
                        self.wfile.write(block)
                        sent += len(block)
                except OSError:
                    pass
                hub.stats.add_sent(name, sent)

            # -- routing ------------------------------------------------------------------

            def _route(self, head: bool) -> None:
                path = urlsplit(self.path).path
                hub.stats.record(self.command, ("" if main else "cdn:") + self.path,
                                 self.headers.get("Authorization"))
                if not main:
                    self._send(200, b"x = 1\n", {"ETag": git_blob_sha1(b"x = 1\n")}, head)
                    return
                parts = [unquote(p) for p in path.split("/") if p]
                if parts[:2] == ["api", "organizations"]:
                    self._json({"trustedKernelPublisher": True}, head=head)
                    return
                if parts[:3] == ["api", "kernels", ORG] and len(parts) >= 4:
                    self._api(parts[3], parts[4:], head)
                    return
                if parts[:2] == ["kernels", ORG] and len(parts) >= 6 and parts[3] == "resolve":
                    self._resolve(parts[2], "/".join(parts[5:]), head)
                    return
                self._send(404, b'{"error":"no such repo"}', {"X-Error-Code": "RepoNotFound"},
                           head)

            def _api(self, name: str, rest: list[str], head: bool) -> None:
                repo_id = f"{ORG}/{name}"
                if rest[:1] == ["revision"] or not rest:
                    if name == "headers":
                        self._endless_headers(name)
                        return
                    if name == "endless":
                        self._stream(name, b'{"id":"hostile/endless","sha":"' + COMMIT.encode()
                                     + b'","padding":"', b"A")
                        return
                    self._json({"id": repo_id, "sha": COMMIT, "private": False}, head=head)
                    return
                if rest == ["refs"]:
                    self._json({"branches": [{"name": "v1", "ref": "refs/heads/v1",
                                              "targetCommit": COMMIT}],
                                "tags": [], "converts": []}, head=head)
                    return
                if rest[:1] == ["tree"]:
                    if name == "loop":
                        with hub.stats.lock:
                            hub.stats.loop_pages += 1
                            pages = hub.stats.loop_pages
                        if pages > hub.loop_limit:
                            # 400, not 5xx: the test should not wait for the client's retries.
                            self._send(400, b'{"error":"enough"}', head=head)
                            return
                        self._json([], {"Link": f'<{hub.url}{self.path}>; rel="next"'}, head)
                        return
                    if name in WIDE_PATHS:
                        self._wide_page(name, head)
                        return
                    entries = []
                    for file_path, data in sorted(hub.files_of(name).items()):
                        entries.append({"type": "file", "path": file_path, "size": len(data),
                                        "oid": git_blob_sha1(data)})
                    self._json(entries, head=head)
                    return
                self._missing(head)

            def _wide_page(self, name: str, head: bool) -> None:
                """Page `cursor` of WIDE_PATHS[name]-byte paths (outside build/, so nothing
                would be downloaded), linking to the next until WIDE_PAGES[name]."""
                query = parse_qs(urlsplit(self.path).query)
                page = int(query.get("cursor", ["0"])[0])
                with hub.stats.lock:
                    hub.stats.tree_pages[name] = hub.stats.tree_pages.get(name, 0) + 1
                length = WIDE_PATHS[name]
                entries = []
                for i in range(WIDE_ENTRIES):
                    prefix = f"notes/{page:05d}-{i:04d}-"
                    entries.append({"type": "file", "path": prefix + "p" * (length - len(prefix)),
                                    "size": 6, "oid": git_blob_sha1(b"x = 1\n")})
                headers = {}
                if page + 1 < WIDE_PAGES[name]:
                    next_url = (f"{hub.url}/api/kernels/{ORG}/{name}/tree/{COMMIT}"
                                f"?recursive=true&cursor={page + 1}")
                    headers["Link"] = f'<{next_url}>; rel="next"'
                self._json(entries, headers, head)

            def _resolve(self, name: str, file_path: str, head: bool) -> None:
                data = hub.files_of(name).get(file_path)
                if data is None:
                    self._missing(head)
                    return
                meta = {"X-Repo-Commit": COMMIT, "ETag": f'"{git_blob_sha1(data)}"'}
                if not head:
                    redirect = {
                        "gopher": f"gopher://127.0.0.1:{hub.sink_port}/_PAYLOAD%0D%0A",
                        "file": hub.secret.as_uri(),
                        "token": f"{hub.cdn_url}/blob/{file_path}",
                    }.get(name)
                    if redirect:
                        self._send(302, b"", {**meta, "Location": redirect})
                        return
                    if name == "overlong":
                        self._stream(name, b"", b"x")
                        return
                self._send(200, data, meta, head)

        return Handler
