# SPDX-License-Identifier: Apache-2.0
"""Cold and warm kernel downloads from `kernelhub serve`: our client against huggingface_hub.

    .venv/bin/python bench/hub/download.py [--bin-dir DIR] [--baseline-bin-dir DIR]
        [--size-mb 70] [--repeat 3] [--json FILE]

Publishes (with huggingface_hub) a kernel with three variants, each holding one random file
of SIZE MB, to a throw-away `kernelhub serve` (from --bin-dir), then runs REPEAT rounds of:
  cold  ours        `kernelhub download REPO --revision main --all-variants`, a whole process,
                    into an empty cache
  cold  baseline    the same with the `kernelhub` of --baseline-bin-dir (another build, say
                    main's), when given
  cold  reference   `snapshot_download(REPO, repo_type="kernel", allow_patterns="build/*")`
                    into an empty cache, timed inside the interpreter (its start-up and import
                    are not charged to it)
  cold  floor       `curl --parallel` GETting the three large LFS objects (their URLs looked up
                    before the clock starts) into three files: the bytes read over loopback and
                    written once, with no hashing, no cache and no API request
  warm  ours / baseline / reference   the same calls again on the filled cache (one revision
                    request each, then cache lookups)
Each round runs the contenders in turn, the order reversed every other round (the machine is
shared: a build starting midway then weighs on both), and notes the load average first. It
prints every round, then the best and the median of each, and the ratios: reference time / our
time (above 1 means we are faster) and our time / the floor's, of the best and median times and
the median of each round's own ratio.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
REPO = "bench/big-kernel"
VARIANTS = ["torch-universal", "torch-cpu", "torch-cuda"]
BIG_FILE = "big_kernel/weights.bin"


def start_server(bin_dir: Path, root: Path, token_file: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([str(bin_dir / "kernelhub"), "serve", "--root", str(root), "--port", "0",
                             "--token-file", str(token_file)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        sys.exit(f"kernelhub serve did not print its URL (got {url!r})")
    return proc, url


def env_for(url: str, cache: Path) -> dict:
    env = dict(os.environ, HF_ENDPOINT=url, HF_HUB_CACHE=str(cache), HF_HOME=str(cache.parent / "home"),
               NO_PROXY="127.0.0.1,localhost", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_XET="1")
    env.pop("KERNELS_CACHE", None)
    env.pop("HF_HUB_OFFLINE", None)
    return env


def python(code: str, env: dict) -> str:
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                          text=True).stdout


def publish(url: str, token: str, size_mb: int, work: Path) -> None:
    folder = work / "kernel"
    for variant in VARIANTS:
        target = folder / "build" / variant / "big_kernel"
        target.mkdir(parents=True)
        (target / "__init__.py").write_text(f"VARIANT = {variant!r}\n")
        (target / "weights.bin").write_bytes(os.urandom(size_mb * 1024 * 1024))
    python(f"""
from huggingface_hub import HfApi
api = HfApi(endpoint={url!r}, token={token!r})
api.create_repo({REPO!r}, repo_type="kernel", exist_ok=True)
api.upload_folder(repo_id={REPO!r}, repo_type="kernel", folder_path={str(folder)!r})
""", env_for(url, work / "publish-cache"))


def lfs_urls(url: str) -> list[str]:
    """Where each variant's large file redirects to (the LFS object), asked once, untimed."""
    parsed = urllib.parse.urlsplit(url)
    urls = []
    for variant in VARIANTS:
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port)
        conn.request("HEAD", f"/kernels/{REPO}/resolve/main/build/{variant}/{BIG_FILE}")
        answer = conn.getresponse()
        location = answer.getheader("Location")
        conn.close()
        if answer.status != 302 or not location:
            sys.exit(f"expected an LFS redirect for {variant}, got {answer.status}")
        urls.append(urllib.parse.urljoin(url, location))
    return urls


def time_ours(bin_dir: Path, url: str, cache: Path) -> float:
    start = time.perf_counter()
    subprocess.run([str(bin_dir / "kernelhub"), "download", REPO, "--revision", "main",
                    "--all-variants"], env=env_for(url, cache), check=True, capture_output=True)
    return time.perf_counter() - start


def time_reference(url: str, cache: Path) -> float:
    out = python(f"""
import time
from huggingface_hub import snapshot_download
start = time.perf_counter()
snapshot_download({REPO!r}, repo_type="kernel", revision="main", allow_patterns="build/*")
print(time.perf_counter() - start)
""", env_for(url, cache))
    return float(out.strip().splitlines()[-1])


def time_floor(curl: str, urls: list[str], folder: Path) -> float:
    folder.mkdir()
    command = [curl, "--silent", "--fail", "--parallel", "--parallel-max", "8"]
    for index, url in enumerate(urls):
        command += ["--output", str(folder / f"file{index}"), url]
    start = time.perf_counter()
    # With --parallel, curl 7.88 draws its progress meter even when silent: thrown away.
    subprocess.run(command, check=True, env=dict(os.environ, NO_PROXY="127.0.0.1,localhost"),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin")
    parser.add_argument("--baseline-bin-dir", type=Path,
                        help="also time the kernelhub of this folder (another build)")
    parser.add_argument("--size-mb", type=int, default=70)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write every round's times here")
    args = parser.parse_args()

    curl = shutil.which("curl")
    if curl is None:
        print("curl is not installed: no floor row", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="kernelhub-bench-"))
    token_file = work / "tokens"
    token_file.write_text("bench-token\n")
    server, url = start_server(args.bin_dir, work / "root", token_file)
    rounds = []
    try:
        publish(url, "bench-token", args.size_mb, work)
        urls = lfs_urls(url)
        contenders = {"ours": lambda c: time_ours(args.bin_dir, url, c)}
        if args.baseline_bin_dir:
            contenders["baseline"] = lambda c: time_ours(args.baseline_bin_dir, url, c)
        contenders["reference"] = lambda c: time_reference(url, c)
        names = list(contenders) + (["floor"] if curl else [])
        for i in range(args.repeat):
            load = os.getloadavg()[0]
            times: dict = {"load": load}
            for name in (names if i % 2 == 0 else names[::-1]):
                target = work / f"round-{i}-{name}"
                if name == "floor":
                    times["floor"] = {"cold": time_floor(curl, urls, target)}
                else:
                    times[name] = {"cold": contenders[name](target)}
                    times[name]["warm"] = contenders[name](target)
                shutil.rmtree(target)
            rounds.append(times)
            cells = "  ".join(f"{name} {times[name]['cold']:.3f}" for name in names)
            print(f"round {i + 1}: load {load:5.2f}  cold: {cells}", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    total_mb = args.size_mb * len(VARIANTS)
    print(f"kernel: {len(VARIANTS)} variants x {args.size_mb} MB = {total_mb} MB, {args.repeat} "
          f"round(s), load average {min(r['load'] for r in rounds):.2f}-"
          f"{max(r['load'] for r in rounds):.2f}")
    for phase in ("cold", "warm"):
        for pick, how in (("best", min), ("median", statistics.median)):
            value = {name: how([r[name][phase] for r in rounds]) for name in names
                     if phase in rounds[0][name]}
            cells = "   ".join(f"{name} {seconds:7.3f} s" for name, seconds in value.items())
            ratios = [f"reference/{name} {value['reference'] / value[name]:5.2f}x"
                      for name in ("ours", "baseline") if name in value]
            if "floor" in value:
                ratios += [f"{name}/floor {value[name] / value['floor']:5.2f}x"
                           for name in ("ours", "baseline", "reference") if name in value]
            print(f"{phase:5} {pick:6} {cells}   " + "   ".join(ratios))
    # Each round's own ratio: the contenders of one round ran under the same load.
    for name in ("ours", "baseline"):
        if name in names:
            per_round = sorted(r["reference"]["cold"] / r[name]["cold"] for r in rounds)
            print(f"cold  reference/{name} per round: median {statistics.median(per_round):.2f}x, "
                  f"{per_round[0]:.2f}x-{per_round[-1]:.2f}x")
    if "floor" in names:
        for name in ("ours", "baseline"):
            if name in names:
                per_round = sorted(r[name]["cold"] / r["floor"]["cold"] for r in rounds)
                print(f"cold  {name}/floor per round: median {statistics.median(per_round):.2f}x, "
                      f"{per_round[0]:.2f}x-{per_round[-1]:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(rounds, indent=1) + "\n")


if __name__ == "__main__":
    main()
