# SPDX-License-Identifier: Apache-2.0
"""Runs the reference huggingface_hub against a `kernelhub serve` in a child process.

HF_ENDPOINT is read once, when huggingface_hub is imported, so every call runs in a fresh
interpreter with the server's URL, a throw-away HF_HOME and no proxy (hub-api.md §7).
"""
import json
import os
import subprocess
import sys
import textwrap
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


def http(server, method, path, body=None, token=None, headers=None):
    """A raw request; returns (status, headers, body bytes) for any status."""
    data = body if isinstance(body, (bytes, type(None))) else body.encode()
    request = urllib.request.Request(server.url + path, data=data, method=method)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
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
