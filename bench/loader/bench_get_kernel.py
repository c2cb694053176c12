# SPDX-License-Identifier: Apache-2.0
"""get_kernel from `kernelhub serve`: our `kernelhub` Python package against the reference
`kernels`, both against the same server and the same cache.

    .venv/bin/python bench/loader/bench_get_kernel.py [--bin-dir DIR] [--python-dir DIR]
        [--kernel-dir DIR] [--repeat 7] [--cold-repeat 3] [--calls 20] [--json FILE]

One run builds examples/relu for cpu (or takes an already built kernel folder with
--kernel-dir), starts `kernelhub serve` with a trusted organisation, uploads the build with
`kernel-builder upload` as bench/relu branch v1, locks it with the reference `kernels lock`,
then measures, for ours and for the reference:
  warm      `import <package>` + get_kernel(version=1) in a fresh process whose `import torch`
            came first and is not timed, on a filled cache (median of --repeat processes)
  repeated  further get_kernel calls in that process, per call (median of --calls)
  cold      the same as warm into an empty cache (median of --cold-repeat)
  locked    `import <package>` + load_kernel(lockfile=kernels.lock) on the filled cache
  offline   `import <package>` + get_kernel with HF_HUB_OFFLINE=1 on the filled cache
Every load passes backend="cpu" (the venv's torch is a CUDA build; the machine may have no
GPU) and is checked against torch.relu outside the timed part.

Timings talk to the server directly, or with --rtt-ms through a proxy that holds each request
that many milliseconds (a distant Hub). The HTTP requests of each phase are counted in a second
pass through a counting TCP proxy, so the proxy's own latency is in no timing (it would charge
the side that makes more requests). Ratios are reference time / our time: above 1 means ours
is faster. The aim (issue 6): warm at least 3x, and 0 requests for locked and offline loads.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ORG = "bench"
REPO = f"{ORG}/relu"
TOKEN = "bench-token"

# The child: torch first (not timed), then the package import and the first load (timed),
# then --calls more loads (each timed), then one relu call against torch.relu.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    import torch
    side, op, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # --clock cpu: this process's CPU time, which waiting for a core on a busy machine does not
    # inflate (waiting for the server is not in it either). All its threads: work a loader
    # hands to a thread of its own counts as much as its own.
    clock = time.process_time if os.environ.get("BENCH_CLOCK") == "cpu" else time.perf_counter
    if side == "floor":
        # What any loader must at least do: import the cached variant's module by path. Only
        # that is timed: finding the folder (a glob over the cache, 0.3 ms) and the first
        # torch.randn (0.5 ms) were inside the timed part until 2026-11-30, which made the
        # floor about twice what it is and every ratio against it look better than it was.
        import importlib.util
        variant = next(Path(os.environ["HF_HUB_CACHE"]).glob("kernels--*/snapshots/*/build/*"))
        start = clock()
        spec = importlib.util.spec_from_file_location(
            "_bench_floor", variant / "__init__.py", submodule_search_locations=[str(variant)])
        kernel = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = kernel
        spec.loader.exec_module(kernel)
        first = clock() - start
        x = torch.randn(4096)
        print(json.dumps({{"first": first, "calls": [], "import": 0.0,
                          "same": bool(torch.equal(kernel.relu(x), torch.relu(x))),
                          "module": kernel.__name__, "package": str(variant)}}))
        raise SystemExit
    start = clock()
    if side in ("ours", "baseline"):
        import kernelhub as package
    else:
        import kernels as package
    imported = clock() - start
    if op == "locked":
        load = lambda: package.load_kernel({repo!r}, lockfile=Path(os.environ["BENCH_LOCKFILE"]),
                                           backend="cpu")
    else:
        load = lambda: package.get_kernel({repo!r}, version=1, backend="cpu")
    kernel = load()
    first = clock() - start
    per_call = []
    for _ in range(calls):
        start = clock()
        load()
        per_call.append(clock() - start)
    x = torch.randn(4096)
    same = bool(torch.equal(kernel.relu(x), torch.relu(x)))
    print(json.dumps({{"first": first, "calls": per_call, "same": same, "import": imported,
                      "module": kernel.__name__, "package": package.__file__}}))
""").format(repo=REPO)


class CountingProxy:
    """A TCP proxy in front of the server that counts the HTTP requests it forwards (the
    request line of each header block the client sends; loads send no request bodies)."""

    _REQUEST_LINE = re.compile(rb"^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH) (\S+) HTTP/1\.[01]")

    def __init__(self, upstream: tuple[str, int], delay_ms: float = 0.0):
        self.upstream = upstream
        self.delay = delay_ms / 1000
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def take(self) -> list[str]:
        """The requests seen since the last call, and a fresh count."""
        with self._lock:
            seen, self.requests = self.requests, []
        return seen

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            threading.Thread(target=self._client_to_server, args=(client, upstream),
                             daemon=True).start()
            threading.Thread(target=self._relay, args=(upstream, client), daemon=True).start()

    def _client_to_server(self, client: socket.socket, upstream: socket.socket) -> None:
        pending = b""
        try:
            while data := client.recv(65536):
                pending += data
                *blocks, pending = pending.split(b"\r\n\r\n")
                for block in blocks:
                    match = self._REQUEST_LINE.match(block.lstrip(b"\r\n"))
                    if match:
                        with self._lock:
                            self.requests.append(f"{match[1].decode()} {match[2].decode()}")
                if self.delay:
                    time.sleep(self.delay)  # the round trip to a Hub that far away
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            self._shut(client, upstream)

    def _relay(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self._shut(source, sink)

    @staticmethod
    def _shut(*sockets: socket.socket) -> None:
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def hub_env(url: str, cache: Path, *, python_dir: Path | None, lockfile: Path | None = None,
            offline: bool = False) -> dict:
    env = dict(os.environ, HF_ENDPOINT=url, HF_HUB_CACHE=str(cache),
               HF_HOME=str(cache.parent / "hf-home"), NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    # The reference kernels 0.17.2 builds a user agent ending in "; " when telemetry is off,
    # which httpx refuses: leave telemetry settings alone. The token is only for uploads.
    for name in ("KERNELS_CACHE", "HF_HUB_OFFLINE", "LOCAL_KERNELS", "HF_TOKEN",
                 "HF_HUB_DISABLE_TELEMETRY", "DISABLE_TELEMETRY", "DO_NOT_TRACK"):
        env.pop(name, None)
    if python_dir:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(python_dir), env.get("PYTHONPATH")]))
    if lockfile:
        env["BENCH_LOCKFILE"] = str(lockfile)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


# Loads the reference cannot do at all (kernels 0.17.2 refuses a cache-only load of a snapshot
# it filled with one variant: "IncompleteSnapshotError ... .gitattributes"): side -> phase ->
# the error's last line. Such a phase is reported as failing, not timed.
FAILURES: dict[str, dict[str, str]] = {}


# --baseline-python-dir: another build of our package, measured as the side "baseline".
BASELINE_DIR: Path | None = None


def child(side: str, op: str, calls: int, env: dict, phase: str | None = None) -> dict | None:
    if side == "baseline":
        env = dict(env, PYTHONPATH=os.pathsep.join(
            filter(None, [str(BASELINE_DIR), os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-c", CHILD, side, op, str(calls)], env=env,
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0 and phase is not None and side == "reference":
        FAILURES.setdefault(side, {})[phase] = result.stderr.strip().splitlines()[-1]
        return None
    if result.returncode != 0:
        sys.exit(f"{side} {op} load failed:\n{result.stderr[-4000:]}")
    out = json.loads(result.stdout.strip().splitlines()[-1])
    if not out["same"]:
        sys.exit(f"{side} {op}: relu differs from torch.relu")
    return out


def run_tool(args: list, env: dict | None = None, cwd: Path | None = None) -> str:
    result = subprocess.run([str(a) for a in args], env=env, cwd=cwd, capture_output=True,
                            text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def build_relu(bin_dir: Path, work: Path) -> Path:
    kernel = work / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build"))
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    print("bench: building examples/relu (cpu) ...", flush=True)
    run_tool([bin_dir / "kernel-builder", "build", kernel, "--python", sys.executable,
              "--skip-checks"])
    return kernel


def start_server(bin_dir: Path, root: Path, token_file: Path) -> tuple[subprocess.Popen, str]:
    root.mkdir(parents=True)
    (root / "config.toml").write_text(f"[organizations.{ORG}]\ntrustedKernelPublisher = true\n")
    proc = subprocess.Popen([str(bin_dir / "kernelhub"), "serve", "--root", str(root), "--port",
                             "0", "--token-file", str(token_file)], stdout=subprocess.PIPE,
                            text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        sys.exit(f"kernelhub serve did not print its URL (got {url!r})")
    return proc, url


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin",
                        help="where kernel-builder and kernelhub are")
    parser.add_argument("--python-dir", type=Path,
                        help="a build tree's <build>/python, put first on PYTHONPATH (default: "
                             "the kernelhub package installed in this interpreter)")
    parser.add_argument("--kernel-dir", type=Path, help="an already built relu (skips the build)")
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per warm phase")
    parser.add_argument("--cold-repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20, help="repeated loads in one process")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--sides", default="ours,reference",
                        help="comma-separated: ours, reference (one alone prints no ratios)")
    parser.add_argument("--baseline-python-dir", type=Path,
                        help="another build's <build>/python, measured as the side 'baseline' "
                             "in place of the reference: ratios are baseline time / ours")
    parser.add_argument("--rtt-ms", type=float, default=0.0,
                        help="time the loads against a Hub this many milliseconds away (each "
                             "request held that long by a proxy); 0: the server directly")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: each child's CPU time, all its threads (steadier on a busy "
                             "machine; waits for the server are not counted)")
    args = parser.parse_args()
    sides = [side for side in ("ours", "reference") if side in args.sides.split(",")]
    if args.baseline_python_dir:
        global BASELINE_DIR
        BASELINE_DIR = args.baseline_python_dir
        sides = ["ours", "baseline"]
    os.environ["BENCH_CLOCK"] = args.clock
    other = sides[1] if len(sides) == 2 else "reference"

    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="kernelhub-loader-bench-"))
    token_file = work / "tokens"
    token_file.write_text(TOKEN + "\n")
    server, url = start_server(args.bin_dir, work / "root", token_file)
    host, port = re.match(r"http://([^:/]+):(\d+)", url).groups()
    proxy = CountingProxy((host, int(port)))
    # --rtt-ms: the timed loads go through a proxy that holds each request that long, as a Hub
    # that far away would (connections are made at once: loopback's handshake stays).
    distant = CountingProxy((host, int(port)), args.rtt_ms) if args.rtt_ms else None
    timed_url = distant.url if distant else url
    try:
        kernel = args.kernel_dir or build_relu(args.bin_dir, work)
        upload_env = dict(hub_env(url, work / "upload-cache", python_dir=None), HF_TOKEN=TOKEN)
        run_tool([args.bin_dir / "kernel-builder", "upload", kernel, "--repo-id", REPO,
                  "--branch", "v1"], env=upload_env)
        project = work / "project"
        project.mkdir()
        (project / "pyproject.toml").write_text(
            f'[project]\nname = "bench-project"\nversion = "0.1"\n\n'
            f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
        run_tool([Path(sys.executable).parent / "kernels", "lock", project],
                 env=hub_env(url, work / "lock-cache", python_dir=None))
        lockfile = project / "kernels.lock"

        def env(cache: Path, **kw) -> dict:
            return hub_env(timed_url, cache, python_dir=args.python_dir, **kw)

        # One shared warm cache: the reference fills it, ours then loads from the same files.
        warm_cache = work / "cache-warm"
        child("reference", "get", 0, env(warm_cache))
        module = {side: child(side, "get", 0, env(warm_cache)) for side in sides}

        times: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        for _ in range(args.repeat):
            for side in sides:  # interleaved so load swings hit both
                out = child(side, "get", args.calls, env(warm_cache))
                times[side].setdefault("warm", []).append(out["first"])
                times[side].setdefault("warm-after-import", []).append(
                    out["first"] - out["import"])
                times[side].setdefault("repeated", []).extend(out["calls"])
                for phase, op, extra in (("locked", "locked", {"lockfile": lockfile}),
                                         ("offline", "get", {"offline": True})):
                    out = child(side, op, 0, env(warm_cache, **extra), phase=phase)
                    times[side].setdefault(phase, [])
                    times[side].setdefault(f"{phase}-after-import", [])
                    if out is not None:
                        times[side][phase].append(out["first"])
                        times[side][f"{phase}-after-import"].append(out["first"] - out["import"])
        floor = [child("floor", "get", 0, env(warm_cache))["first"] for _ in range(args.repeat)]
        for i in range(args.cold_repeat):
            for side in sides:
                cache = work / f"cache-cold-{side}-{i}"
                times[side].setdefault("cold", []).append(child(side, "get", 0, env(cache))["first"])
                shutil.rmtree(cache)

        # Second pass, through the counting proxy: the requests each phase sends.
        requests: dict[str, dict[str, float]] = {side: {} for side in sides}
        counted = lambda cache, **kw: hub_env(proxy.url, cache, python_dir=args.python_dir, **kw)
        for side in sides:
            proxy.take()
            child(side, "get", 0, counted(warm_cache))
            warm_requests = proxy.take()
            requests[side]["warm"] = len(warm_requests)
            print(f"{side}: a warm load's requests: {', '.join(warm_requests)}")
            child(side, "get", args.calls, counted(warm_cache))
            extra = len(proxy.take()) - requests[side]["warm"]
            requests[side]["repeated"] = round(extra / max(args.calls, 1), 2)
            cache = work / f"cache-count-{side}"
            child(side, "get", 0, counted(cache))
            requests[side]["cold"] = len(proxy.take())
            child(side, "locked", 0, counted(warm_cache, lockfile=lockfile), phase="locked")
            locked = proxy.take()
            requests[side]["locked"] = len(locked)
            child(side, "get", 0, counted(warm_cache, offline=True), phase="offline")
            offline = proxy.take()
            requests[side]["offline"] = len(offline)
            if side == "ours" and (locked or offline):
                print(f"bench: ours sent requests when locked/offline: {locked + offline}")
    finally:
        proxy.close()
        if distant:
            distant.close()
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    load_after = os.getloadavg()
    for side in sides:
        print(f"{side}: module {module[side]['module']} from {module[side]['package']}")
    print(f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f}; "
          f"warm, locked and offline: median of {args.repeat} processes; repeated: median of "
          f"{args.repeat * args.calls} calls; cold: median of {args.cold_repeat} processes")
    print(f"clock: {args.clock}" + (f"; each request {args.rtt_ms:g} ms away" if args.rtt_ms
                                     else ""))
    short = "ref" if other == "reference" else "base"
    print(f"{'phase':17} {'ours ms':>9} {short + ' ms':>9} {'ratio':>7} {'req ours':>9} "
          f"{'req ' + short:>8}")
    summary = {}
    for phase in ("warm", "warm-after-import", "repeated", "cold", "locked",
                  "locked-after-import", "offline", "offline-after-import"):
        row = {}
        for side in sides:
            if times[side][phase]:
                row[f"{side}_ms"] = median_ms(times[side][phase])
            row[f"requests_{side}"] = requests[side][phase.replace("-after-import", "")]
        if len(sides) == 2 and f"{other}_ms" in row and "ours_ms" in row:
            row["ratio"] = row[f"{other}_ms"] / row["ours_ms"]
        summary[phase] = row
        cell = lambda key, fmt: format(row[key], fmt) if key in row else "-"
        print(f"{phase:17} {cell('ours_ms', '9.2f'):>9} {cell(other + '_ms', '9.2f'):>9} "
              f"{cell('ratio', '6.2f') + 'x' if 'ratio' in row else '-':>7} "
              f"{cell('requests_ours', ''):>9} {cell('requests_' + other, ''):>8}")
    for side, phases in FAILURES.items():
        for phase, error in phases.items():
            print(f"{side} {phase}: fails: {error}")
    floor_ms = median_ms(floor)
    summary["import-floor"] = {"ms": floor_ms}
    print(f"import floor (importlib of the cached variant): {floor_ms:.2f} ms")
    for phase in ("warm", "locked", "offline"):
        row = summary[f"{phase}-after-import"]
        print(f"  {phase} load after the package import: " + ", ".join(
            f"{side} {row[side + '_ms'] / floor_ms:.2f}x" for side in sides
            if side + "_ms" in row) + " the floor")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "times": times, "failures": FAILURES,
                                         "load_average": [load_before, load_after]}, indent=2))

if __name__ == "__main__":
    main()
