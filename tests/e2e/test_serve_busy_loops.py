# SPDX-License-Identifier: Apache-2.0
"""A busy event loop does not keep new connections out (issue 20 item 7). The acceptor ran on
the first of the server's loops, so while that loop worked (400 large downloads starting at
once, in the issue; here one page whose Markdown takes the renderer's whole 2 s of CPU) no new
connection was accepted at all, and a request meant for an idle loop waited for it. The
acceptor now has a thread of its own. What is asserted is an order, not a time: the small
request on the idle loop is answered before the long one on the busy loop."""
import json
import select
import socket
import time
import urllib.parse

from serve_helpers import Served, commit, http, start_serve, stop_serve

# cmark-gfm 0.29.0.gfm.6 is quadratic on this; the renderer stops it after 2 s of CPU.
SLOW_MARKDOWN = "![[]()" * 80000


def connect(url):
    host, port = urllib.parse.urlsplit(url).netloc.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=60)


def send(sock, path):
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())


def answer(sock):
    """Reads one answer (Content-Length framed); returns its status line."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        body += sock.recv(65536)
    return head.split(b"\r\n")[0].decode()


def test_a_new_connection_is_served_while_another_loop_is_busy(kernelhub_bin, tmp_path):
    root, tokens = tmp_path / "root", tmp_path / "tokens"
    tokens.write_text("kh-token\n")
    process, url = start_serve(kernelhub_bin, root, "--token-file", tokens)
    try:
        server = Served(url, "kh-token")
        assert http(server, "POST", "/api/repos/create", json.dumps(
            {"organization": "m", "name": "slow", "type": "model"}), token="kh-token",
            headers={"Content-Type": "application/json"})[0] == 200
        assert commit(server, "models/m/slow", "main",
                      {"slow.md": SLOW_MARKDOWN.encode()})[0] == 200
    finally:
        stop_serve(process)
    # A fresh server with two loops: connections go to them in turn, the first to loop 0.
    process, url = start_serve(kernelhub_bin, root, "--threads", "2")
    try:
        busy, idle = connect(url), connect(url)
        for sock in (busy, idle):  # each accepted and answered: busy on loop 0, idle on 1
            send(sock, "/api/kernelhub/trusted-keys")
            assert answer(sock).endswith("200 OK")
        send(busy, "/m/slow/blob/main/slow.md")
        time.sleep(0.3)  # setup, not a measure: let loop 0 start the 2 s rendering
        third, fourth = connect(url), connect(url)  # loop 0, then loop 1
        send(fourth, "/api/kernelhub/trusted-keys")
        readable, _, _ = select.select([busy, fourth], [], [], 60)
        assert readable, "neither answered"
        first = "small" if fourth in readable and busy not in readable else "slow"
        assert first == "small", "the new connection waited for the busy loop"
        assert answer(fourth).endswith("200 OK")
        assert answer(busy).endswith("200 OK")
        for sock in (busy, idle, third, fourth):
            sock.close()
    finally:
        stop_serve(process)
