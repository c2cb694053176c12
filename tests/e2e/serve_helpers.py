# SPDX-License-Identifier: Apache-2.0
"""Runs the reference huggingface_hub against a `kernelhub serve` in a child process.

HF_ENDPOINT is read once, when huggingface_hub is imported, so every call runs in a fresh
interpreter with the server's URL, a throw-away HF_HOME and no proxy (hub-api.md §7).
"""
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request


def client_env(server, hf_home, token=True, telemetry=False):
    env = dict(os.environ)
    env.update({
        "HF_ENDPOINT": server.url,
        "HF_HOME": str(hf_home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        # hf_xet (installed with huggingface_hub) uploads LFS files through Xet only; kernelhub
        # serve, like the Hub for clients without Xet, takes them through Git LFS
        # (tests/data/hub/lfs-wire-forms.md).
        "HF_HUB_DISABLE_XET": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE"):
        env.pop(name, None)
    if token:
        env["HF_TOKEN"] = server.token
    if telemetry:
        # kernels 0.17.2 with HF_HUB_DISABLE_TELEMETRY=1 builds a user agent ending in "; ",
        # which httpx2 refuses before sending (LocalProtocolError: Illegal header value).
        del env["HF_HUB_DISABLE_TELEMETRY"]
    return env


def run_client(server, hf_home, code, token=True, telemetry=False):
    """Runs `code` (which may print one JSON value as its last line) and returns that value."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=client_env(server, hf_home, token, telemetry),
        capture_output=True, text=True, timeout=300,
    )
    if result.returncode != 0:
        raise AssertionError(f"client failed:\n{result.stdout}\n{result.stderr}")
    lines = result.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 3xx itself is the answer


def http(server, method, path, body=None, token=None, headers=None, follow=True):
    """A raw request; returns (status, headers, body bytes) for any status. With `follow`
    false a redirect is returned as it came (its status, its Set-Cookie)."""
    data = body if isinstance(body, (bytes, type(None))) else body.encode()
    request = urllib.request.Request(server.url + path, data=data, method=method)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    handlers = [urllib.request.ProxyHandler({})] + ([] if follow else [_NoRedirect()])
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


SERVER_TOKEN = object()


def commit(server, repo_path, revision, files, summary="upload", deleted=(),
           token=SERVER_TOKEN, query=""):
    """POSTs an NDJSON commit of {path: bytes} to /api/{repo_path}/commit/{revision}.

    `token` defaults to the server's write token; None sends no Authorization header.
    `query` ("create_pr=1") is appended to the URL."""
    import base64
    import urllib.parse

    lines = [json.dumps({"key": "header", "value": {"summary": summary, "description": ""}})]
    for path, content in files.items():
        lines.append(json.dumps({"key": "file", "value": {
            "path": path, "encoding": "base64", "content": base64.b64encode(content).decode()}}))
    for path in deleted:
        lines.append(json.dumps({"key": "deletedFile", "value": {"path": path}}))
    return http(server, "POST",
                f"/api/{repo_path}/commit/{urllib.parse.quote(revision, safe='')}"
                + (f"?{query}" if query else ""),
                "\n".join(lines) + "\n",
                token=server.token if token is SERVER_TOKEN else token,
                headers={"Content-Type": "application/x-ndjson"})


def wait_for_variant_checks(server, repo_path, revision="main", token=None, deadline_s=120):
    """Waits until the hub has checked the variants of `revision` (it does so after each commit,
    on a worker: GET /api/{repo_path}/variant-checks/{revision} says "verifying" until then)
    and returns that answer. The deadline only ends a hung wait; nothing is timed."""
    import time

    path = f"/api/{repo_path}/variant-checks/{urllib.request.quote(revision, safe='')}"
    end = time.monotonic() + deadline_s
    while True:
        status, _, body = http(server, "GET", path, token=token)
        assert status == 200, body
        answer = json.loads(body)
        if not answer["verifying"]:
            return answer
        if time.monotonic() > end:
            raise AssertionError(f"the hub still checks {repo_path}@{revision}: {answer}")
        time.sleep(0.02)


def start_serve(kernelhub_bin, root, *args):
    """Starts `kernelhub serve --root ROOT --port 0 ARGS...`; returns (process, base URL).

    stderr stays a pipe: read it after stop_serve()."""
    process = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", *map(str, args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise AssertionError(f"kernelhub serve did not start: {process.stderr.read()}")
    return process, url


def stop_serve(process):
    """SIGTERM, then SIGKILL after 10 s; returns what it wrote to stderr."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return process.stderr.read()


class Served:
    """What http() and commit() need of a server: its URL and a write token."""

    def __init__(self, url, token=None):
        self.url = url
        self.token = token


def login_form(server):
    """GETs /login; returns the headers a post of that form needs (its cookie) and the form's
    hidden field, as a browser would send them back."""
    import re

    status, headers, body = http(server, "GET", "/login")
    assert status == 200, body
    cookie = (headers.get("Set-Cookie") or "").split(";")[0]
    field = re.search(rb'name="form" value="([0-9a-f]{64})"', body)
    return ({"Cookie": cookie} if cookie else {}), (field.group(1).decode() if field else None)


def post_login(server, token, with_form=True, headers=None):
    """POSTs the sign-in form with `token`, after GETting the form unless `with_form` is false
    (a post made by another site's page, which cannot read the form)."""
    import urllib.parse

    sent = {"Content-Type": "application/x-www-form-urlencoded"}
    fields = {"token": token}
    if with_form:
        cookie, field = login_form(server)
        sent.update(cookie)
        if field:
            fields["form"] = field
    sent.update(headers or {})
    return http(server, "POST", "/login", urllib.parse.urlencode(fields), headers=sent,
                follow=False)


def bytes_read_after_a_stall(sock, request: bytes, stall_s: float = 3) -> int:
    """Sends `request` on `sock` (whose receive buffer the caller keeps small), reads nothing
    for `stall_s` seconds, then reads until the server closes: how many bytes of the answer
    came at all. A server that cuts a stalled reader at its deadline sends fewer than the
    whole answer."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    sock.sendall(request)
    time.sleep(stall_s)
    received = 0
    try:
        while chunk := sock.recv(1 << 20):
            received += len(chunk)
    except ConnectionResetError:
        pass
    return received
