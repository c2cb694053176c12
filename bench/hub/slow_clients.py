#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 12's server figures, for one `kernelhub serve` binary (run it on the old and the new):

- delay: how long a new client's GET of a repository's info takes with no other client, and
  with 1,000 slow connections open (500 idle, 500 sending a request head one byte at a time,
  from ten loopback addresses); median and worst of N requests, each with its own deadline
  (a request that gets no answer in time counts as the deadline);
- sigterm: how long the server takes to exit on SIGTERM with an idle and a dripping client;
- rss: the server's peak RSS (VmHWM) before and after 8 unauthenticated 200 MB commit POSTs,
  and over one authorized 200 MB commit (one file).

Usage: bench/hub/slow_clients.py KERNELHUB_BIN [--requests N] [--skip-rss]
Loopback only; needs ~2,100 descriptors (raised from the hard limit).
"""
import argparse
import base64
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

TOKEN = "bench-token"
DEADLINE = 10.0


def start(binary, root, token_file):
    process = subprocess.Popen(
        [binary, "serve", "--root", str(root), "--port", "0", "--token-file", str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        sys.exit("kernelhub serve did not start")
    return process, url


def address(url):
    host, port = urllib.parse.urlsplit(url).netloc.rsplit(":", 1)
    return host, int(port)


def connect(url, source="127.0.0.1", timeout=DEADLINE):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(address(url))
    return sock


def request(url, method, path, body=b"", headers=(), timeout=DEADLINE):
    """One request on a fresh connection; (status or None, seconds)."""
    began = time.monotonic()
    try:
        with connect(url, timeout=timeout) as sock:
            head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in headers)
            head += f"Content-Length: {len(body)}\r\n\r\n" if body else "\r\n"
            sock.sendall(head.encode() + body)
            answer = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else None
    except OSError:
        status = None
    return status, time.monotonic() - began


def commit_body(files):
    lines = [json.dumps({"key": "header", "value": {"summary": "bench"}})]
    for path, content in files.items():
        lines.append(json.dumps({"key": "file", "value": {
            "path": path, "encoding": "base64", "content": base64.b64encode(content).decode()}}))
    return ("\n".join(lines) + "\n").encode()


def prepare(url):
    auth = [("Authorization", f"Bearer {TOKEN}")]
    assert request(url, "POST", "/api/repos/create",
                   json.dumps({"name": "k", "organization": "bench", "type": "kernel"}).encode(),
                   auth)[0] == 200
    assert request(url, "POST", "/api/kernels/bench/k/commit/main",
                   commit_body({"a.txt": b"abcd"}), auth)[0] == 200


def delays(url, count):
    out = []
    for _ in range(count):
        status, seconds = request(url, "GET", "/api/kernels/bench/k")
        out.append(seconds if status == 200 else DEADLINE)
    return out


def measure_delay(url, count):
    quiet = delays(url, count)
    idle, dripping = [], []
    for i in range(10):
        for _ in range(100):
            sock = connect(url, f"127.0.0.{i + 2}")
            (idle if i < 5 else dripping).append(sock)
    for sock in dripping:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
    stop = threading.Event()

    def drip():
        while not stop.is_set():
            for sock in dripping:
                try:
                    sock.send(b"X")
                except OSError:
                    pass
            stop.wait(0.5)

    dripper = threading.Thread(target=drip)
    dripper.start()
    time.sleep(0.5)
    try:
        loaded = delays(url, count)
    finally:
        stop.set()
        dripper.join()
        for sock in idle + dripping:
            sock.close()
    return quiet, loaded


def measure_sigterm(binary, work):
    process, url = start(binary, work / "sigterm-root", work / "tokens")
    idle, dripping = connect(url), connect(url)
    dripping.sendall(b"GET / HTTP/1.1\r\nHo")
    time.sleep(0.2)
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    while process.poll() is None and time.monotonic() - began < 60:
        try:
            dripping.send(b"s")
        except OSError:
            pass
        time.sleep(0.05)
    seconds = time.monotonic() - began
    if process.poll() is None:
        process.kill()
        process.wait()
        seconds = None
    idle.close()
    dripping.close()
    return seconds


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


def unauthenticated_post(url, size):
    """Sends a 200 MB commit body without a token as fast as the server takes it."""
    try:
        with connect(url, timeout=120) as sock:
            sock.sendall(f"POST /api/kernels/bench/k/commit/main HTTP/1.1\r\nHost: x\r\n"
                         f"Content-Length: {size}\r\n\r\n".encode())
            chunk = b"x" * (1 << 20)
            for _ in range(size >> 20):
                sock.sendall(chunk)
            sock.recv(4096)
    except OSError:
        pass  # cut off after the 401, as intended


def measure_rss(binary, work):
    """Peak RSS (MiB): at start, after 8 unauthenticated 200 MB POSTs, and, on a fresh server,
    at start and after one authorized commit of a 150 MB file (~200 MB of base64)."""
    out = {}
    process, url = start(binary, work / "rss-root", work / "tokens")
    try:
        prepare(url)
        out["start"] = peak_rss_mib(process.pid)
        senders = [threading.Thread(target=unauthenticated_post, args=(url, 200 << 20))
                   for _ in range(8)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
        out["unauthenticated"] = peak_rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=60)
    body = commit_body({"big.bin": os.urandom(150 << 20)})
    process, url = start(binary, work / "rss-root-2", work / "tokens")
    try:
        prepare(url)
        out["commit_start"] = peak_rss_mib(process.pid)
        out["status"], out["seconds"] = request(
            url, "POST", "/api/kernels/bench/k/commit/main", body,
            [("Authorization", f"Bearer {TOKEN}")], timeout=600)
        out["commit"] = peak_rss_mib(process.pid)
        out["size"] = len(body)
    finally:
        process.terminate()
        process.wait(timeout=60)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--skip-rss", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        (work / "tokens").write_text(TOKEN + "\n")
        process, url = start(args.binary, work / "root", work / "tokens")
        try:
            prepare(url)
            quiet, loaded = measure_delay(url, args.requests)
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        ms = lambda values, f: f"{f(values) * 1000:.1f} ms"  # noqa: E731
        print(f"GET, no other client:       median {ms(quiet, statistics.median)}, "
              f"worst {ms(quiet, max)}")
        print(f"GET, 1,000 slow connections: median {ms(loaded, statistics.median)}, "
              f"worst {ms(loaded, max)} ({sum(d >= DEADLINE for d in loaded)} of "
              f"{len(loaded)} unanswered in {DEADLINE:.0f} s)")
        sigterm = measure_sigterm(args.binary, work)
        print("SIGTERM with an idle and a dripping client: " +
              (f"exited in {sigterm * 1000:.0f} ms" if sigterm is not None
               else "still running after 60 s"))
        if not args.skip_rss:
            rss = measure_rss(args.binary, work)
            print(f"peak RSS: {rss['start']:.0f} MiB at start, {rss['unauthenticated']:.0f} MiB "
                  f"after 8 unauthenticated 200 MB POSTs")
            print(f"peak RSS: {rss['commit_start']:.0f} MiB at start, {rss['commit']:.0f} MiB "
                  f"after one authorized {rss['size'] / 1e6:.0f} MB commit (status "
                  f"{rss['status']}, {rss['seconds']:.1f} s)")

if __name__ == "__main__":
    main()
