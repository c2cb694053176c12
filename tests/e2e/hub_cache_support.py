# SPDX-License-Identifier: Apache-2.0
"""Helpers for the cache interop and fault tests: publishing a small kernel to `kernelhub
serve` with the reference huggingface_hub, running Python snippets in a fresh interpreter
(huggingface_hub reads HF_ENDPOINT, HF_HUB_CACHE and HF_HUB_OFFLINE at import), and a
throttling TCP proxy that logs every request line so tests can count transfers."""
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

VARIANT = "torch-universal"
# A variant no machine running these tests accepts, so the variant choice is deterministic.
OTHER_VARIANT = "torch29-cxx11-cu128-aarch64-linux"


METADATA = json.dumps({"name": "relu", "id": "_relu_cache_test", "version": 1,
                       "license": "apache-2.0", "python-depends": [],
                       "backend": {"type": "cpu"}})


def make_kernel(folder: Path, big_bytes: int = 0) -> Path:
    """A kernel repository tree: two variants, a README and, optionally, one big blob."""
    files = {
        "README.md": "# relu\n",
        f"build/{VARIANT}/metadata.json": METADATA,
        f"build/{VARIANT}/relu/__init__.py": "def relu(x):\n    return max(x, 0)\n",
        f"build/{VARIANT}/relu/sub dir/a b.txt": "a name with a space\n",
        f"build/{VARIANT}/relu/empty.txt": "",
        f"build/{OTHER_VARIANT}/relu/__init__.py": "raise ImportError\n",
    }
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if big_bytes:
        (folder / f"build/{VARIANT}/relu/big.bin").write_bytes(os.urandom(big_bytes))
    return folder


def hub_env(url: str, cache: Path, **extra) -> dict:
    env = {
        "HF_ENDPOINT": url,
        "HF_HOME": str(cache.parent / "hf-home"),
        "HF_HUB_CACHE": str(cache),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        # hf_xet would upload LFS files through Xet, which kernelhub serve does not speak.
        "HF_HUB_DISABLE_XET": "1",
    }
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_python(code: str, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with `env` on top of ours; its last stdout line is
    expected to be JSON when the caller wants a value."""
    merged = dict(os.environ)
    merged.update(env)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=merged,
                            capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"python failed ({result.returncode}):\n{result.stderr}")
    return result


def last_json(result: subprocess.CompletedProcess):
    return json.loads(result.stdout.strip().splitlines()[-1])


def publish(url: str, token: str, repo_id: str, folder: Path, branches=("v1",)) -> str:
    """Creates the kernel repo on the server, uploads `folder` to main and branches it; returns
    the commit sha."""
    result = run_python(f"""
        import json
        from huggingface_hub import HfApi
        api = HfApi(endpoint={url!r}, token={token!r})
        api.create_repo({repo_id!r}, repo_type="kernel", exist_ok=True)
        info = api.upload_folder(repo_id={repo_id!r}, repo_type="kernel", folder_path={str(folder)!r})
        for branch in {list(branches)!r}:
            api.create_branch({repo_id!r}, repo_type="kernel", branch=branch, exist_ok=True)
        print(json.dumps(info.oid))
    """, {"HF_ENDPOINT": url, "NO_PROXY": "127.0.0.1,localhost", "HF_HUB_DISABLE_TELEMETRY": "1",
          "HF_HUB_DISABLE_XET": "1"})
    return last_json(result)


def cache_files(cache: Path) -> dict:
    """Every file and link under the cache (relative path -> kind), for before/after checks."""
    out = {}
    for path in sorted(cache.rglob("*")):
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
        out[str(path.relative_to(cache))] = kind
    return out


class ThrottlingProxy:
    """A TCP proxy to `upstream` that sends at most `rate` bytes a second towards the client
    and records the request line of every HTTP request it forwards."""

    _REQUEST = re.compile(rb"(GET|HEAD|POST|PUT|DELETE) (\S+) HTTP/1\.[01]\r\n((?:[^\r]+\r\n)*)")

    def __init__(self, upstream_url: str, rate: int):
        match = re.match(r"http://([^:/]+):(\d+)", upstream_url)
        self.upstream = (match.group(1), int(match.group(2)))
        self.rate = rate
        self.requests = []  # (method, path, headers text)
        self.bytes_down = 0
        self.connections = 0  # accepted from clients
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self._closed = True
        self._server.close()

    def gets(self, needle: str) -> int:
        with self._lock:
            return sum(1 for m, p, _ in self.requests if m == "GET" and needle in p)

    def ranges(self) -> list:
        with self._lock:
            return [h for _, _, h in self.requests if "range:" in h.lower()]

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            upstream = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump_up, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump_down, args=(upstream, client), daemon=True).start()

    def _pump_up(self, client, upstream):
        pending = b""
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                pending += data
                # Only complete header blocks are parsed; the downloads send no bodies.
                *complete, pending = pending.split(b"\r\n\r\n")
                for block in complete:
                    match = self._REQUEST.search(block + b"\r\n")
                    if match:
                        with self._lock:
                            self.requests.append((match.group(1).decode(), match.group(2).decode(),
                                                  match.group(3).decode(errors="replace")))
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (upstream, client):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _pump_down(self, upstream, client):
        chunk = max(1024, self.rate // 20)
        try:
            while True:
                data = upstream.recv(chunk)
                if not data:
                    break
                client.sendall(data)
                with self._lock:
                    self.bytes_down += len(data)
                time.sleep(len(data) / self.rate)
        except OSError:
            pass
        finally:
            for sock in (upstream, client):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
