# SPDX-License-Identifier: Apache-2.0
"""The framing of the server's answers on the wire (issue 25): the server writes an answer's
head itself and sends head and body at once when the socket takes them, finishing on the
event loop when it does not, and parses a head that came whole without waiting. What each
case checks: the status line and Connection field for HTTP/1.0 and 1.1 with and without
keep-alive; pipelined requests in one packet answered in order; Content-Length on a HEAD and
none on a 304; a body larger than the socket's buffers arriving whole to a slow reader, and
cut at its deadline for a reader that stalls."""
import json
import socket
import time
import urllib.parse

import pytest

from serve_helpers import (Served, bytes_read_after_a_stall, commit, http, start_serve,
                           stop_serve)

SMALL = b"0123456789" * 100
# In memory (under the 8 MiB above which a blob is inflated while sent), and far more than
# loopback's socket buffers hold once the reader's is small.
LARGE = bytes(range(256)) * (7 << 12)  # 7 MiB
PATH = "/kernels/org/k/resolve/main/"


@pytest.fixture(scope="module")
def served(kernelhub_bin, tmp_path_factory):
    folder = tmp_path_factory.mktemp("framing")
    root, tokens = folder / "root", folder / "tokens"
    tokens.write_text("kh-token\n")
    root.mkdir()
    (root / "config.toml").write_text("[storage]\nlfs-threshold = false\n")
    process, url = start_serve(kernelhub_bin, root, "--token-file", tokens,
                               "--transfer-timeout", "1", "--min-rate-kib", "65536")
    server = Served(url, "kh-token")
    assert http(server, "POST", "/api/repos/create", json.dumps(
        {"organization": "org", "name": "k", "type": "kernel"}), token="kh-token",
        headers={"Content-Type": "application/json"})[0] == 200
    assert commit(server, "kernels/org/k", "main",
                  {"small.bin": SMALL, "large.bin": LARGE})[0] == 200
    yield server
    stop_serve(process)


def connect(url, timeout=20):
    host, port = urllib.parse.urlsplit(url).netloc.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=timeout)


class Reader:
    """Reads answers off one connection, framed by their Content-Length."""

    def __init__(self, sock):
        self.sock = sock
        self.data = b""

    def fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError
        self.data += chunk

    def answer(self, head_only=False):
        """(status line, {lower name: value}, body)."""
        while b"\r\n\r\n" not in self.data:
            self.fill()
        head, self.data = self.data.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        fields = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            assert name.lower() not in fields, f"{name} twice"
            fields[name.lower()] = value.strip()
        length = 0 if head_only else int(fields.get("content-length", 0))
        while len(self.data) < length:
            self.fill()
        body, self.data = self.data[:length], self.data[length:]
        return lines[0], fields, body

    def closed(self):
        """Whether the server closed the connection (nothing more after the answers read)."""
        try:
            self.fill()
        except (EOFError, ConnectionResetError):
            return True
        return False


def request(path, version="1.1", extra=""):
    return f"GET {path} HTTP/{version}\r\nHost: x\r\n{extra}\r\n".encode()


@pytest.mark.parametrize("version, extra, status_line, connection, kept", [
    ("1.1", "", "HTTP/1.1 200 OK", None, True),
    ("1.1", "Connection: close\r\n", "HTTP/1.1 200 OK", "close", False),
    ("1.0", "", "HTTP/1.0 200 OK", None, False),
    ("1.0", "Connection: keep-alive\r\n", "HTTP/1.0 200 OK", "keep-alive", True),
])
def test_keep_alive_is_answered_for_each_version(served, version, extra, status_line,
                                                 connection, kept):
    with connect(served.url) as sock:
        reader = Reader(sock)
        sock.sendall(request(PATH + "small.bin", version, extra))
        line, fields, body = reader.answer()
        assert line == status_line
        assert fields.get("connection") == connection
        assert fields["content-type"] == "application/octet-stream"
        assert int(fields["content-length"]) == len(SMALL)
        assert body == SMALL
        if kept:
            sock.sendall(request(PATH + "small.bin", version, extra))
            assert reader.answer()[2] == SMALL
        else:
            assert reader.closed()


def test_pipelined_requests_in_one_packet_are_answered_in_order(served):
    with connect(served.url) as sock:
        reader = Reader(sock)
        sock.sendall(request(PATH + "small.bin") + request(PATH + "missing.bin")
                     + request("/api/kernels/org/k") + request(PATH + "small.bin"))
        assert reader.answer()[2] == SMALL
        line, fields, body = reader.answer()
        assert line == "HTTP/1.1 404 Not Found"
        assert fields["x-error-code"] == "EntryNotFound"
        assert json.loads(body)["error"]
        line, fields, body = reader.answer()
        assert line == "HTTP/1.1 200 OK" and fields["content-type"] == "application/json"
        assert json.loads(body)["id"] == "org/k"
        assert reader.answer()[2] == SMALL


def test_a_head_split_across_packets_is_read_whole(served):
    with connect(served.url) as sock:
        reader = Reader(sock)
        whole = request(PATH + "small.bin")
        for part in (whole[:5], whole[5:30], whole[30:]):
            sock.sendall(part)
            time.sleep(0.05)  # separate packets: setup, nothing is timed
        assert reader.answer()[2] == SMALL


def test_head_and_304_frame_their_empty_bodies(served):
    with connect(served.url) as sock:
        reader = Reader(sock)
        sock.sendall(f"HEAD {PATH}small.bin HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        line, fields, _ = reader.answer(head_only=True)
        assert line == "HTTP/1.1 200 OK"
        assert int(fields["content-length"]) == len(SMALL)
        etag = fields["etag"]
        sock.sendall(request(PATH + "small.bin", extra=f"If-None-Match: {etag}\r\n"))
        line, fields, body = reader.answer()
        assert line == "HTTP/1.1 304 Not Modified"
        assert "content-length" not in fields and body == b""
        # Nothing was left on the connection: the next answer starts where the 304 ended.
        sock.sendall(request(PATH + "small.bin"))
        assert reader.answer()[2] == SMALL


def test_a_large_answer_reaches_a_slow_reader_whole(served):
    with connect(served.url) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 10)
        reader = Reader(sock)
        sock.sendall(request(PATH + "large.bin") + request(PATH + "small.bin"))
        line, fields, _ = reader.answer(head_only=True)
        assert line == "HTTP/1.1 200 OK"
        assert int(fields["content-length"]) == len(LARGE)
        while len(reader.data) < len(LARGE):
            reader.data += sock.recv(4096)  # small reads: the server's send waits on them
        body, reader.data = reader.data[:len(LARGE)], reader.data[len(LARGE):]
        assert body == LARGE
        assert reader.answer()[2] == SMALL


def test_a_large_answer_to_a_reader_that_stalls_is_cut_at_its_deadline(served):
    with connect(served.url) as sock:
        # The deadline (1 s + 7 MiB at 64 MiB/s) passes while nothing is read.
        received = bytes_read_after_a_stall(sock, request(PATH + "large.bin"))
        assert received < len(LARGE), "the answer waited for a reader that stalled"


def test_many_pipelined_requests_are_all_answered(served):
    count = 2000  # a few hundred in each read of the server's
    with connect(served.url, timeout=120) as sock:
        reader = Reader(sock)
        sock.sendall(request("/api/kernelhub/trusted-keys") * count + request(PATH + "small.bin"))
        for _ in range(count):
            line, _, body = reader.answer()
            assert line == "HTTP/1.1 200 OK" and json.loads(body) == {"keys": []}
        assert reader.answer()[2] == SMALL
