#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 23 §3: many nodes downloading one kernel variant at once, three ways of serving it.

    .venv/bin/python bench/hub/cluster_downloads.py [--bin-dir DIR] [--size-mb 100]
        [--clients 1000] [--processes 4] [--setups direct,mirror,nginx]

Publishes (huggingface_hub's upload_folder, so the library goes through Git LFS) a variant of
one random SIZE MB library and three small files to an upstream `kernelhub serve`, then, for
each setup, CLIENTS clients download all four files at once, each resolving them by the
commit id and following the LFS redirect of the library:

  direct   clients -> upstream
  mirror   clients -> `kernelhub serve --mirror UPSTREAM` on a fresh root -> upstream
  nginx    clients -> nginx (proxy_cache, proxy_cache_lock, proxy_cache_revalidate; a fresh
           cache) -> a mirror on a fresh root -> upstream

The clients are PROCESSES processes of CLIENTS/PROCESSES threads each (http.client, one
keep-alive connection per client, the body read into a 1 MiB buffer and thrown away; the
first client of each process hashes what it gets and checks it). All of them wait for one
start signal. Everything listens on and connects to 127.0.0.1 only; the servers are started
with --max-connections-per-peer above CLIENTS, as every client comes from that address.

Measured per setup: the time from the start signal to the last byte of the last client, the
bytes and requests that reached the upstream (in `direct` the clients' own; otherwise what a
counting TCP proxy in front of the upstream forwarded from it: headers included, and its
request lines), and the peak resident memory of each server process during the downloads
(VmHWM from /proc/PID/status, reset before each setup with `echo 5 > /proc/PID/clear_refs`;
nginx: master and workers summed), and the servers' CPU seconds.
"""
from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import multiprocessing
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
REPO = "bench/cluster"
VARIANT = "build/torch-cpu"
TOKEN = "bench-token"
NGINX = "/usr/sbin/nginx"
CHUNK = 1 << 20


# --- the servers -------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_hub(bin_dir: Path, root: Path, token_file: Path, clients: int,
              mirror: str | None = None) -> tuple[subprocess.Popen, str]:
    args = [str(bin_dir / "kernelhub"), "serve", "--root", str(root), "--port", "0",
            "--token-file", str(token_file), "--max-connections-per-peer", str(clients + 64)]
    if mirror:
        args += ["--mirror", mirror]
    log = (root.parent / f"{root.name}.log").open("w")
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                               text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        sys.exit(f"kernelhub serve did not start on loopback (got {url!r}); see {log.name}")
    return process, url


NGINX_CONF = """
{user}
worker_processes 2;
worker_rlimit_nofile 8192;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    log_format origin '$request_method $request_uri $upstream_cache_status $status '
                      '$upstream_bytes_received';
    access_log {tmp}/access.log origin;
    sendfile on;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy_temp;
    fastcgi_temp_path {tmp}/fastcgi_temp;
    uwsgi_temp_path {tmp}/uwsgi_temp;
    scgi_temp_path {tmp}/scgi_temp;
    proxy_cache_path {tmp}/cache levels=1:2 keys_zone=hub:10m max_size={max_size}m
                     inactive=7d use_temp_path=off;
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 0;
        location / {{
            proxy_pass http://{origin};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_cache hub;
            proxy_cache_key $scheme$http_host$request_uri;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 1h;
            proxy_cache_lock_age 1h;
            proxy_cache_revalidate on;
            proxy_cache_use_stale error timeout updating;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, folder: Path, origin: str, size_mb: int):
        folder.mkdir()
        self.folder = folder
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        user = "user root;" if os.geteuid() == 0 else ""
        (folder / "nginx.conf").write_text(NGINX_CONF.format(
            user=user, tmp=folder, port=port, origin=urllib.parse.urlsplit(origin).netloc,
            max_size=4 * size_mb + 1024))
        self.process = subprocess.Popen(
            [NGINX, "-c", str(folder / "nginx.conf"), "-p", str(folder), "-g", "daemon off;"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.05)
        self.process.kill()
        sys.exit(f"nginx did not start: {self.process.stderr.read()!r}")

    def pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [self.process.pid] + [int(p) for p in children.read_text().split()]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


class CountingProxy:
    """A TCP proxy on 127.0.0.1 in front of the upstream: counts the bytes it forwards from
    the upstream and the HTTP request lines it forwards to it."""

    REQUEST = re.compile(rb"(?:GET|HEAD|POST|PUT) (\S+) HTTP/1\.[01]\r\n")

    def __init__(self, target: str):
        self.target = urllib.parse.urlsplit(target)
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        self.bytes_from_upstream = 0
        self.requests: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self):
        with self.lock:
            self.bytes_from_upstream = 0
            self.requests = []

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((self.target.hostname, self.target.port))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_upstream: bool):
        pending = b""
        try:
            while True:
                data = source.recv(CHUNK)
                if not data:
                    break
                if from_upstream:
                    with self.lock:
                        self.bytes_from_upstream += len(data)
                else:
                    pending = (pending + data)[-65536:]
                    found = list(self.REQUEST.finditer(pending))
                    if found:
                        with self.lock:
                            self.requests += [m.group(1).decode(errors="replace") for m in found]
                        pending = pending[found[-1].end():]
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            source.close()

    def close(self):
        self.listener.close()


def reset_peak(pid: int):
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the variant -------------------------------------------------------------------------------

def make_variant(folder: Path, size_mb: int) -> dict[str, tuple[int, str]]:
    """Writes the variant under folder/build; returns {path in repo: (size, sha256)}."""
    package = folder / VARIANT / "cluster"
    package.mkdir(parents=True)
    files = {
        f"{VARIANT}/metadata.json": json.dumps({"python-depends": [], "backend": {"type": "cpu"}},
                                               indent=2).encode() + b"\n",
        f"{VARIANT}/cluster/__init__.py": b"from ._ops import ops\n",
        f"{VARIANT}/cluster/_ops.py": b"import torch\nops = torch.ops._cluster_bench\n",
    }
    for path, data in files.items():
        (folder / path).write_bytes(data)
    result = {path: (len(data), hashlib.sha256(data).hexdigest()) for path, data in files.items()}
    library = f"{VARIANT}/cluster/_cluster_bench.abi3.so"
    digest = hashlib.sha256()
    with (folder / library).open("wb") as out:
        head = b"\x7fELF\x02\x01\x01\x00"
        out.write(head)
        digest.update(head)
        for _ in range(size_mb):
            block = os.urandom(1 << 20)
            out.write(block)
            digest.update(block)
    result[library] = ((size_mb << 20) + len(head), digest.hexdigest())
    return result


def publish(url: str, folder: Path, home: Path) -> str:
    env = dict(os.environ, HF_ENDPOINT=url, HF_TOKEN=TOKEN, HF_HOME=str(home),
               HF_HUB_CACHE=str(home / "hub"), NO_PROXY="127.0.0.1,localhost",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_XET="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1")
    env.pop("HF_HUB_OFFLINE", None)
    code = (f"from huggingface_hub import HfApi\napi = HfApi()\n"
            f"api.create_repo({REPO!r}, repo_type='kernel', exist_ok=True)\n"
            f"print(api.upload_folder(repo_id={REPO!r}, repo_type='kernel', "
            f"folder_path={str(folder)!r}).oid)")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return out[-1]


# --- the clients -------------------------------------------------------------------------------

def fetch(connections: dict, url: str, buffer: bytearray, digest) -> tuple[int, int]:
    """GETs url, following redirects; returns (body bytes, requests)."""
    requests = 0
    for _ in range(5):
        parts = urllib.parse.urlsplit(url)
        if parts.hostname != "127.0.0.1":
            raise RuntimeError(f"refusing a non-loopback address: {url}")
        key = parts.netloc
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        for attempt in range(2):
            connection = connections.get(key)
            if connection is None:
                connection = connections[key] = http.client.HTTPConnection(key, timeout=3600)
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                connection.close()
                del connections[key]
                if attempt:
                    raise
        requests += 1
        if response.status in (301, 302, 307, 308):
            response.read()
            url = urllib.parse.urljoin(url, response.getheader("Location"))
            continue
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status} {response.read()[:200]!r}")
        received = 0
        view = memoryview(buffer)
        while True:
            n = response.readinto(buffer)
            if not n:
                break
            received += n
            if digest is not None:
                digest.update(view[:n])
        return received, requests
    raise RuntimeError(f"{url}: too many redirects")


def client_process(base: str, sha: str, files: dict, threads: int, first: bool, ready, start,
                   results):
    ends, errors = [], []
    totals = {"bytes": 0, "requests": 0}
    lock = threading.Lock()
    go = threading.Event()

    def client(index: int):
        connections: dict = {}
        buffer = bytearray(CHUNK)
        got, requests = 0, 0
        go.wait()
        try:
            for path, (size, sha256) in files.items():
                digest = hashlib.sha256() if first and index == 0 else None
                n, r = fetch(connections, f"{base}/kernels/{REPO}/resolve/{sha}/{path}", buffer,
                             digest)
                got += n
                requests += r
                if n != size or (digest is not None and digest.hexdigest() != sha256):
                    raise RuntimeError(f"{path}: got {n} bytes (want {size}) or a wrong sha256")
        except Exception as error:  # noqa: BLE001 - reported, counted as a failed client
            with lock:
                errors.append(repr(error)[:300])
        end = time.monotonic()
        for connection in connections.values():
            connection.close()
        with lock:
            ends.append(end)
            totals["bytes"] += got
            totals["requests"] += requests

    threading.stack_size(256 << 10)  # a thousand threads need little stack each
    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    ready.put(True)
    start.wait()
    go.set()
    for worker in workers:
        worker.join()
    results.put({"last": max(ends), "bytes": totals["bytes"], "requests": totals["requests"],
                 "errors": errors})


def run_clients(base: str, sha: str, files: dict, clients: int, processes: int) -> dict:
    context = multiprocessing.get_context("fork")
    ready, results, start = context.Queue(), context.Queue(), context.Event()
    shares = [clients // processes + (1 if i < clients % processes else 0)
              for i in range(processes)]
    procs = [context.Process(target=client_process,
                             args=(base, sha, files, share, i == 0, ready, start, results))
             for i, share in enumerate(shares) if share]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=600)
    began = time.monotonic()
    start.set()
    gathered = [results.get() for _ in procs]
    for proc in procs:
        proc.join()
    return {"seconds": max(g["last"] for g in gathered) - began,
            "bytes": sum(g["bytes"] for g in gathered),
            "requests": sum(g["requests"] for g in gathered),
            "errors": [e for g in gathered for e in g["errors"]]}


# --- the run -----------------------------------------------------------------------------------

def measure(name: str, base: str, servers: dict, proxy: CountingProxy | None, sha: str,
            files: dict, args) -> dict:
    pids = {label: ([p.pid] if isinstance(p, subprocess.Popen) else p.pids())
            for label, p in servers.items()}
    for group in pids.values():
        for pid in group:
            reset_peak(pid)
    cpu_before = {label: sum(cpu_seconds(p) for p in group) for label, group in pids.items()}
    if proxy:
        proxy.reset()
    load_before = os.getloadavg()[0]
    got = run_clients(base, sha, files, args.clients, args.processes)
    row = {
        "setup": name, "seconds": got["seconds"], "client_bytes": got["bytes"],
        "client_requests": got["requests"], "failed_clients": len(got["errors"]),
        "first_error": got["errors"][0] if got["errors"] else None,
        "load_before": load_before, "load_after": os.getloadavg()[0],
        "peak_rss": {label: sum(peak_rss(p) for p in group) for label, group in pids.items()},
        "cpu_seconds": {label: sum(cpu_seconds(p) for p in group) - cpu_before[label]
                        for label, group in pids.items()},
    }
    if proxy:
        time.sleep(0.5)  # the proxy's pump threads count the last bytes as they forward them
        with proxy.lock:
            row["origin_bytes"] = proxy.bytes_from_upstream
            row["origin_requests"] = len(proxy.requests)
            row["origin_request_lines"] = list(proxy.requests)
    else:
        row["origin_bytes"] = got["bytes"]
        row["origin_requests"] = got["requests"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin")
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=4,
                        help="client processes (the clients are their threads)")
    parser.add_argument("--setups", default="direct,mirror,nginx")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    setups = args.setups.split(",")
    if "nginx" in setups and not os.access(NGINX, os.X_OK):
        sys.exit(f"the nginx setup needs {NGINX} (Debian's nginx-light)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    work = Path(tempfile.mkdtemp(prefix="kernelhub-bench-cluster-"))
    (work / "tokens").write_text(TOKEN + "\n")
    started: list = []
    rows = []
    proxy = None
    try:
        upstream, upstream_url = start_hub(args.bin_dir, work / "upstream", work / "tokens",
                                           args.clients)
        started.append(upstream)
        files = make_variant(work / "variant", args.size_mb)
        sha = publish(upstream_url, work / "variant", work / "home")
        shutil.rmtree(work / "variant")
        proxy = CountingProxy(upstream_url)
        print(f"published {REPO}@{sha}: {len(files)} files, "
              f"{sum(s for s, _ in files.values()) / 1e6:.1f} MB; {args.clients} clients in "
              f"{args.processes} processes; load average {os.getloadavg()[0]:.2f}", flush=True)
        for setup in setups:
            if setup == "direct":
                row = measure(setup, upstream_url, {"upstream": upstream}, None, sha, files, args)
            elif setup == "mirror":
                mirror, mirror_url = start_hub(args.bin_dir, work / "mirror", work / "tokens",
                                               args.clients, mirror=proxy.url)
                started.append(mirror)
                row = measure(setup, mirror_url, {"upstream": upstream, "mirror": mirror}, proxy,
                              sha, files, args)
            elif setup == "nginx":
                mirror, mirror_url = start_hub(args.bin_dir, work / "nginx-mirror",
                                               work / "tokens", args.clients, mirror=proxy.url)
                started.append(mirror)
                nginx = Nginx(work / "nginx", mirror_url, args.size_mb)
                started.append(nginx)
                row = measure(setup, nginx.url,
                              {"upstream": upstream, "mirror": mirror, "nginx": nginx}, proxy,
                              sha, files, args)
                log = (work / "nginx" / "access.log").read_text().splitlines()
                row["nginx_to_mirror_requests"] = sum(1 for line in log
                                                      if line.split()[2] in ("MISS", "EXPIRED"))
            else:
                sys.exit(f"unknown setup {setup!r} (direct, mirror, nginx)")
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "origin_request_lines"}),
                  flush=True)
    finally:
        for process in reversed(started):
            if isinstance(process, Nginx):
                process.stop()
            else:
                process.terminate()
                process.wait(timeout=30)
        if proxy:
            proxy.close()
        shutil.rmtree(work, ignore_errors=True)

    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    total = sum(s for s, _ in files.values())
    print(f"\n{args.clients} clients x {total / 1e6:.1f} MB ({len(files)} files, by commit id); "
          f"to the last byte, what reached the upstream, peak RSS during the downloads")
    print(f"{'setup':8} {'seconds':>8} {'GB/s':>6} {'failed':>6} {'origin MB':>10} "
          f"{'origin req':>10} {'upstream':>10} {'mirror':>10} {'nginx':>10}")
    for row in rows:
        rss = row["peak_rss"]
        mib = {k: f"{v / 2**20:.1f} MiB" for k, v in rss.items()}
        print(f"{row['setup']:8} {row['seconds']:8.2f} "
              f"{row['client_bytes'] / row['seconds'] / 1e9:6.2f} {row['failed_clients']:6} "
              f"{row['origin_bytes'] / 1e6:10.1f} {row['origin_requests']:10} "
              f"{mib.get('upstream', '-'):>10} {mib.get('mirror', '-'):>10} "
              f"{mib.get('nginx', '-'):>10}")
    direct = next((r for r in rows if r["setup"] == "direct"), None)
    if direct:
        for row in rows:
            if row is direct:
                continue
            print(f"{row['setup']}: origin bytes {direct['origin_bytes'] / row['origin_bytes']:.0f}x "
                  f"fewer than direct; time {direct['seconds'] / row['seconds']:.2f}x direct's speed")


if __name__ == "__main__":
    main()
