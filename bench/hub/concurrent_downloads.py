#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 20 item 7: how long a new small request waits while many large downloads run.

    .venv/bin/python bench/hub/concurrent_downloads.py KERNELHUB_BIN [--downloads 400]
        [--size-mb 100] [--seconds 6] [--threads 32]

Starts `kernelhub serve` on a fresh root (127.0.0.1 only), commits one SIZE MB random file and
one 4 KiB file through its API, then opens DOWNLOADS connections at once, each sending a GET
of the large file and reading the answers as fast as one client process can (select over all of
them; from 127.0.0.2-21, as the server holds at most 256 connections of one address).
Meanwhile a probe thread GETs the small file on a fresh connection every 100 ms, each
with a 10 s deadline. After SECONDS everything is closed. Prints the probe's latency per
second of the run (median and worst), when the last download connection was accepted (its
first answer byte), the server's CPU time over the run and the bytes the downloaders read.
"""
import argparse
import base64
import json
import multiprocessing
import os
import selectors
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

TOKEN = "bench-token"


def start(binary, root, token_file, threads):
    process = subprocess.Popen(
        [binary, "serve", "--root", str(root), "--port", "0", "--token-file", str(token_file),
         "--threads", str(threads)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        raise SystemExit(f"kernelhub serve did not start on loopback: {url!r}")
    return process, url


def request(url, method, path, body=None, headers=None):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url + path, data=body, method=method,
                                 headers={"Authorization": f"Bearer {TOKEN}", **(headers or {})})
    with opener.open(req, timeout=600) as response:
        return response.read()


def publish(url, work, size_mb):
    request(url, "POST", "/api/repos/create",
            json.dumps({"name": "k", "organization": "bench", "type": "kernel"}).encode(),
            {"Content-Type": "application/json"})
    big = os.urandom(size_mb << 20)
    lines = [json.dumps({"key": "header", "value": {"summary": "bench"}})]
    for path, data in (("big.bin", big), ("small.bin", os.urandom(4096))):
        lines.append(json.dumps({"key": "file", "value": {
            "path": path, "encoding": "base64", "content": base64.b64encode(data).decode()}}))
    body = work / "commit.ndjson"
    body.write_text("\n".join(lines) + "\n")
    request(url, "POST", "/api/kernels/bench/k/commit/main", body.read_bytes(),
            {"Content-Type": "application/x-ndjson"})
    body.unlink()


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def probe(host, port, results, failures, stop, started):
    path = b"/kernels/bench/k/resolve/main/small.bin"
    while not stop.is_set():
        begin = time.monotonic()
        latency = None
        try:
            with socket.create_connection((host, port), timeout=10) as sock:
                sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                got = b""
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    got += chunk
                if got.startswith(b"HTTP/1.1 200"):
                    latency = time.monotonic() - begin
                else:
                    failures.append(got[:40])
        except OSError as error:
            failures.append(str(error))
        results.append((begin - started, latency))
        time.sleep(max(0.0, 0.1 - (time.monotonic() - begin)))


def download(host, port, count, seconds, ready, done):
    """Opens `count` connections at once, each GETting the large file, and reads all of them
    as fast as it can for `seconds`; reports when each got its first byte and the bytes read."""
    selector = selectors.DefaultSelector()
    get = (b"GET /kernels/bench/k/resolve/main/big.bin HTTP/1.1\r\nHost: x\r\n"
           b"Connection: close\r\n\r\n")
    first_byte = {}
    received = 0
    ready.set()
    started = time.monotonic()
    for i in range(count):
        sock = socket.socket()
        # From 127.0.0.2-21, 20 addresses (the server holds 256 connections per address);
        # the probe comes from 127.0.0.1.
        sock.bind((f"127.0.0.{2 + i % 20}", 0))
        sock.setblocking(False)
        sock.connect_ex((host, port))
        selector.register(sock, selectors.EVENT_WRITE, i)
    while time.monotonic() - started < seconds:
        for key, events in selector.select(timeout=0.1):
            sock = key.fileobj
            if events & selectors.EVENT_WRITE:
                try:
                    sock.sendall(get)
                except OSError:
                    selector.unregister(sock)
                    sock.close()
                    continue
                selector.modify(sock, selectors.EVENT_READ, key.data)
                continue
            try:
                chunk = sock.recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                selector.unregister(sock)
                sock.close()
                continue
            first_byte.setdefault(key.data, time.monotonic() - started)
            received += len(chunk)
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    done.put((first_byte, received))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--downloads", type=int, default=400)
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--threads", type=int, default=32)
    args = parser.parse_args()
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    with tempfile.TemporaryDirectory(prefix="kh-downloads-") as tmp:
        work = Path(tmp)
        (work / "tokens").write_text(TOKEN + "\n")
        # The file is committed inline (a server with Git LFS would ask for LFS above 10 MB).
        (work / "root").mkdir()
        (work / "root" / "config.toml").write_text("[storage]\nlfs-threshold = false\n")
        process, url = start(args.binary, work / "root", work / "tokens", args.threads)
        try:
            publish(url, work, args.size_mb)
            host, port = url[len("http://"):].rsplit(":", 1)
            port = int(port)
            # The downloads run in a process of their own, so the probe's timing is not held
            # up by the downloaders' reading (Python's GIL).
            ready, done = multiprocessing.Event(), multiprocessing.Queue()
            downloader = multiprocessing.Process(
                target=download, args=(host, port, args.downloads, args.seconds, ready, done))
            downloader.start()
            ready.wait()
            results = []
            failures = []
            stop = threading.Event()
            cpu_before = cpu_seconds(process.pid)
            started = time.monotonic()
            prober = threading.Thread(target=probe,
                                      args=(host, port, results, failures, stop, started))
            prober.start()
            first_byte, received = done.get()
            stop.set()
            prober.join()
            downloader.join()
            elapsed = time.monotonic() - started
            cpu = cpu_seconds(process.pid) - cpu_before
        finally:
            process.terminate()
            process.wait(timeout=30)

    print(f"{args.downloads} downloads of {args.size_mb} MB, {args.threads} server threads, "
          f"{elapsed:.1f} s")
    print(f"downloads answered: {len(first_byte)}; last first byte at "
          f"{max(first_byte.values(), default=float('nan')):.2f} s; "
          f"read {received / 2**30:.2f} GiB")
    print(f"server CPU: {cpu:.2f} s over {elapsed:.1f} s ({cpu / elapsed:.2f} cores)")
    if failures:
        print(f"probe failures: {len(failures)}, first: {failures[0]!r}")
    print("second  probes  median    worst  (a 4 KiB GET on a fresh connection)")
    for second in range(int(args.seconds) + 1):
        window = [lat for at, lat in results if second <= at < second + 1]
        if not window:
            continue
        answered = [lat for lat in window if lat is not None]
        worst = "no answer" if len(answered) < len(window) else f"{max(answered) * 1000:7.1f} ms"
        median = f"{statistics.median(answered) * 1000:7.1f} ms" if answered else "      -"
        print(f"{second:>6}  {len(window):>6}  {median}  {worst}")


if __name__ == "__main__":
    main()
