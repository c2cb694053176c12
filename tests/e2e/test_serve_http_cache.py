# SPDX-License-Identifier: Apache-2.0
"""HTTP caching of `kernelhub serve` behind a real shared cache (issue 23 §2).

Debian's nginx (`proxy_cache`, `proxy_cache_lock` so concurrent misses wait for one fetch,
caching only what the origin's own Cache-Control allows) stands in front of two replicas,
balanced round robin: a hub and `kernelhub serve --mirror` of it (its `[mirror]` table), which
fetches what it lacks from the first. It shows that 200 concurrent downloads of a
variant reach the origins once per URL, that a private file is never served from the cache to
an anonymous client (nor its 404 to the owner), and that a new upload to a branch shows through
the cache once the branch max-age has run out. The header rules themselves are checked on the
wire against one server first (tests/unit/server/test_cache_headers.cpp checks each rule).
"""
import collections
import hashlib
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPConnection
from pathlib import Path

import pytest

from conftest import start_hub_server, stop_hub_server
from serve_helpers import commit, http, run_client

NGINX = "/usr/sbin/nginx"
BRANCH_MAX_AGE = 2
MIRROR_REFRESH = 1
CONFIG = (f"[organizations.org]\ntrustedKernelPublisher = true\n\n"
          f"[http]\nbranch-max-age = {BRANCH_MAX_AGE}\n")
VARIANT = "build/torch-cpu-cxx11-cpu-x86_64-linux"
IMMUTABLE = "public, max-age=31536000, immutable"
CLIENTS = 200


def _variant_files() -> dict:
    """A variant's files: text ones stored in git, and a 3 MB binary library (stored through
    Git LFS, as the Hub stores every binary)."""
    library = b"\x7fELF\x02\x01\x01\x00" + b"".join(
        hashlib.sha256(i.to_bytes(4, "little")).digest() for i in range(3 * 1024 * 1024 // 32))
    return {
        f"{VARIANT}/__init__.py": b"from ._ops import ops\n",
        f"{VARIANT}/_ops.py": b"import torch\nops = torch.ops._relu_cpu\n",
        f"{VARIANT}/metadata.json": b'{"python-depends": []}\n',
        f"{VARIANT}/_relu_cpu.abi3.so": library,
    }


def _upload(server, home: Path, repo: str, folder: Path, private: bool = False):
    """huggingface_hub's create_repo and upload_folder (LFS for the binary)."""
    run_client(server, home, f"""
        from huggingface_hub import HfApi
        api = HfApi()
        api.create_repo({repo!r}, repo_type="kernel", private={private!r}, exist_ok=True)
        api.upload_folder(repo_id={repo!r}, repo_type="kernel", folder_path={str(folder)!r})
    """)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


NGINX_CONF = """
{user}
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 2048; }}
http {{
    log_format origin '$request_method $request_uri $upstream_cache_status $upstream_addr $status';
    access_log {tmp}/access.log origin;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy_temp;
    fastcgi_temp_path {tmp}/fastcgi_temp;
    uwsgi_temp_path {tmp}/uwsgi_temp;
    scgi_temp_path {tmp}/scgi_temp;
    proxy_cache_path {tmp}/cache levels=1:2 keys_zone=hub:10m max_size=1g inactive=1h
                     use_temp_path=off;
    upstream origin {{
        server {first};
        server {second};
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 0;
        location / {{
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_cache hub;
            # The host is part of the key: redirects and tree pages hold absolute URLs.
            proxy_cache_key $scheme$http_host$request_uri;
            # No proxy_cache_valid: only what the origin's Cache-Control allows is kept.
            proxy_cache_lock on;
            # Concurrent misses wait for the one fetch however long it takes (nothing timed).
            proxy_cache_lock_timeout 1h;
            proxy_cache_lock_age 1h;
            proxy_cache_revalidate on;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, tmp: Path, origins):
        self.tmp = tmp
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        user = "user root;" if os.geteuid() == 0 else ""
        (tmp / "nginx.conf").write_text(NGINX_CONF.format(
            user=user, tmp=tmp, port=self.port,
            first=urllib.parse.urlsplit(origins[0].url).netloc,
            second=urllib.parse.urlsplit(origins[1].url).netloc))
        self.process = subprocess.Popen(
            [NGINX, "-c", str(tmp / "nginx.conf"), "-p", str(tmp), "-g", "daemon off;"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.process.kill()
                    log = tmp / "error.log"
                    raise AssertionError(f"nginx did not start: {self.process.stderr.read()!r} "
                                         f"{log.read_text() if log.exists() else ''}")
                time.sleep(0.05)

    def log(self, requests):
        """(method, uri, cache status, upstream address, status) of each of the first
        `requests` requests. nginx logs a request after its answer is out, so this waits for
        the lines; the deadline only ends a hung wait."""
        deadline = time.monotonic() + 60
        while True:
            lines = (self.tmp / "access.log").read_text().splitlines()
            if len(lines) >= requests or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(lines) == requests, (requests, lines[-5:])
        return [tuple(line.split(" ")) for line in lines]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def replicas(kernelhub_bin, tmp_path):
    first = start_hub_server(kernelhub_bin, tmp_path, CONFIG, name="first")
    # The second is a mirror of the first on an empty root: it fetches each repository on its
    # first request (private ones with the first's token, for its own token holders only) and
    # refreshes branches every MIRROR_REFRESH seconds.
    mirror = (f'[mirror]\nupstream = "{first.url}"\n'
              f'token-file = "{tmp_path / "first-tokens"}"\nrefresh = {MIRROR_REFRESH}\n')
    second = start_hub_server(kernelhub_bin, tmp_path, CONFIG + "\n" + mirror, name="second")
    yield first, second
    stop_hub_server(first)
    stop_hub_server(second)


@pytest.fixture
def proxy(replicas, tmp_path):
    if not os.access(NGINX, os.X_OK):
        pytest.skip("needs Debian's nginx (nginx-light, in scripts/setup.sh's apt list)")
    folder = tmp_path / "nginx"
    folder.mkdir()
    server = Nginx(folder, replicas)
    yield server
    server.stop()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _fetch(url, token=None, follow=True):
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    handlers = [urllib.request.ProxyHandler({})] + ([] if follow else [_NoRedirect()])
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=300) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def _publish(first, tmp_path, repo, files, private=False):
    folder = tmp_path / ("files-" + repo.replace("/", "-"))
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)
    _upload(first, tmp_path / "home", repo, folder, private)
    status, _, body = http(first, "GET", f"/api/kernels/{repo}/revision/main", token=first.token)
    assert status == 200, body
    return json.loads(body)["sha"]


def test_headers_on_the_wire(replicas, tmp_path):
    """One server, raw HTTP: the rules of cache_policy.hpp as a client sees them."""
    server, _ = replicas
    files = _variant_files()
    sha = _publish(server, tmp_path, "org/relu", files)
    host = urllib.parse.urlsplit(server.url).netloc

    def raw(method, path, headers=None):
        connection = HTTPConnection(host, timeout=60)
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        connection.close()
        return response.status, response.headers, body

    text = f"{VARIANT}/_ops.py"
    status, headers, body = raw("GET", f"/kernels/org/relu/resolve/{sha}/{text}")
    assert status == 200 and body == files[text]
    etag = headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) == 42, etag
    assert headers["Cache-Control"] == IMMUTABLE
    assert headers["X-Repo-Commit"] == sha
    status, headers, body = raw("GET", f"/kernels/org/relu/resolve/{sha}/{text}",
                                {"If-None-Match": etag})
    assert status == 304 and body == b""
    assert headers["ETag"] == etag and headers["Cache-Control"] == IMMUTABLE
    assert "Content-Length" not in headers  # a 0 would tell a cache the file is empty
    status, headers, _ = raw("HEAD", f"/kernels/org/relu/resolve/main/{text}")
    assert status == 200 and headers["Cache-Control"] == f"public, max-age={BRANCH_MAX_AGE}"
    assert headers["ETag"] == etag

    library = f"{VARIANT}/_relu_cpu.abi3.so"
    oid = hashlib.sha256(files[library]).hexdigest()
    status, headers, _ = raw("HEAD", f"/kernels/org/relu/resolve/{sha}/{library}")
    assert status == 302 and headers["X-Linked-Etag"] == f'"{oid}"'
    assert headers["Cache-Control"] == IMMUTABLE
    location = urllib.parse.urlsplit(headers["Location"])
    _, again, _ = raw("HEAD", f"/kernels/org/relu/resolve/{sha}/{library}")
    assert again["Location"] == headers["Location"]  # one URL for everyone
    target = location.path + "?" + location.query
    status, headers, body = raw("GET", target, {"Range": "bytes=4-"})
    assert status == 206 and body == files[library][4:]
    assert headers["ETag"] == f'"{oid}"' and headers["Cache-Control"] == IMMUTABLE
    status, headers, body = raw("GET", target, {"If-None-Match": f'"{oid}"'})
    assert status == 304 and body == b""

    status, headers, _ = raw("GET", "/api/kernels/org/nothing")
    assert status == 404 and "Authorization" in headers["Vary"]
    assert "public" not in headers["Cache-Control"]


def test_200_downloads_through_nginx_reach_the_origin_once_per_file(replicas, proxy, tmp_path):
    first, _ = replicas
    files = _variant_files()
    sha = _publish(first, tmp_path, "org/relu", files)
    urls = [f"{proxy.url}/kernels/org/relu/resolve/{sha}/{path}" for path in files]
    errors = []
    got = collections.Counter()
    start = threading.Barrier(CLIENTS)

    def client():
        try:
            start.wait()
            for url, (path, content) in zip(urls, files.items()):
                status, _, body = _fetch(url)
                if status != 200 or body != content:
                    errors.append(f"{path}: {status}, {len(body)} bytes")
                else:
                    got[path] += 1
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(repr(error))

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:5]
    assert all(got[path] == CLIENTS for path in files), got

    # From nginx's log: which requests it sent on to an origin (an upstream address), per URL.
    origin = collections.Counter()
    served = collections.Counter()
    # Each client asked for every file, and followed the library's redirect.
    for method, uri, _, upstream, _ in proxy.log(CLIENTS * (len(files) + 1)):
        served[uri] += 1
        if upstream != "-":
            origin[uri] += 1
    resolves = [urllib.parse.urlsplit(url).path for url in urls]
    library = f"{VARIANT}/_relu_cpu.abi3.so"
    downloads = [uri for uri in served if uri.startswith("/.kernelhub/lfs/")]
    oid = hashlib.sha256(files[library]).hexdigest()
    assert downloads == [f"/.kernelhub/lfs/kernels/org/relu/{oid}?commit={sha}"], downloads
    for uri in resolves + downloads:
        assert served[uri] == CLIENTS, (uri, served[uri])
        assert origin[uri] == 1, (uri, origin[uri], dict(origin))
    print(f"\n{CLIENTS} clients x {len(files)} files: {sum(served.values())} requests to nginx, "
          f"{sum(origin.values())} to the origins: {dict(origin)}")

    # huggingface_hub through the cache gets the same bytes, named by the same ETags.
    through_proxy = type("Proxy", (), {"url": proxy.url, "token": None})()
    fetched = run_client(through_proxy, tmp_path / "hf", f"""
        import hashlib, json, pathlib
        from huggingface_hub import snapshot_download
        folder = snapshot_download("org/relu", repo_type="kernel",
                                   allow_patterns=[{VARIANT + "/*"!r}])
        print(json.dumps({{str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
                          for p in pathlib.Path(folder).rglob("*") if p.is_file()}}))
    """, token=False)
    assert fetched == {path: hashlib.sha256(content).hexdigest() for path, content in files.items()}


def test_a_private_file_is_never_served_from_the_cache_to_an_anonymous_client(replicas, proxy,
                                                                              tmp_path):
    first, _ = replicas
    secret = {"notes/secret.txt": b"only for token holders\n"}
    sha = _publish(first, tmp_path, "org/secret", secret, private=True)
    url = f"{proxy.url}/kernels/org/secret/resolve/{sha}/notes/secret.txt"
    # Anonymous first: its 404 must not reach the owner either.
    for round_ in range(3):
        status, headers, body = _fetch(url)
        assert status == 404, (round_, status, body)
        assert b"only for token holders" not in body
        status, headers, body = _fetch(url, token=first.token)
        assert (status, body) == (200, secret["notes/secret.txt"]), (round_, status, body)
        assert headers["Cache-Control"] == "private, no-cache"
    for method, uri, cache, upstream, status in proxy.log(6):
        # Every request went to an origin; none was answered from the cache.
        assert upstream != "-" and cache != "HIT", (method, uri, cache, upstream, status)


def test_a_new_upload_to_a_branch_shows_through_the_cache_within_its_max_age(replicas, proxy,
                                                                            tmp_path):
    first, _ = replicas
    _publish(first, tmp_path, "org/notes", {"notes.txt": b"first\n"})
    url = f"{proxy.url}/kernels/org/notes/resolve/main/notes.txt"
    status, headers, body = _fetch(url)
    assert (status, body) == (200, b"first\n")
    assert headers["Cache-Control"] == f"public, max-age={BRANCH_MAX_AGE}"
    status, _, body = commit(first, "kernels/org/notes", "main", {"notes.txt": b"second\n"})
    assert status == 200, body
    # The cache may answer "first" until the max-age has run out; the deadline only ends a
    # hung wait, nothing is timed.
    deadline = time.monotonic() + 120
    seen = []
    while True:
        status, headers, body = _fetch(url)
        assert status == 200, body
        seen.append(body)
        if body == b"second\n":
            break
        assert body == b"first\n", body
        assert time.monotonic() < deadline, f"still {body!r} after {len(seen)} tries"
        time.sleep(0.2)
    statuses = [entry[2] for entry in proxy.log(1 + len(seen))]
    assert statuses[0] == "MISS" and statuses[-1] in ("EXPIRED", "MISS"), statuses
