# SPDX-License-Identifier: Apache-2.0
"""Cold and warm kernel downloads from `kernelhub serve`: our client against huggingface_hub.

    .venv/bin/python bench/hub/download.py [--bin-dir DIR] [--size-mb 70] [--repeat 3]

Publishes (with huggingface_hub) a kernel with three variants, each holding one random file
of SIZE MB, to a throw-away `kernelhub serve`, then times, best of N:
  cold  ours        `kernelhub download REPO --revision main --all-variants`, a whole process,
                    into an empty cache
  cold  reference   `snapshot_download(REPO, repo_type="kernel", allow_patterns="build/*")`
                    into an empty cache, timed inside the interpreter (its start-up and import
                    are not charged to it)
  warm  ours / reference   the same calls again on the filled cache (one revision request
                    each, then cache lookups)
and prints every ratio (reference time / our time: above 1 means we are faster).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
REPO = "bench/big-kernel"
VARIANTS = ["torch-universal", "torch-cpu", "torch-cuda"]


def start_server(bin_dir: Path, root: Path, token_file: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([str(bin_dir / "kernelhub"), "serve", "--root", str(root), "--port", "0",
                             "--token-file", str(token_file)], stdout=subprocess.PIPE, text=True)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin")
    parser.add_argument("--size-mb", type=int, default=70)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kernelhub-bench-"))
    token_file = work / "tokens"
    token_file.write_text("bench-token\n")
    server, url = start_server(args.bin_dir, work / "root", token_file)
    try:
        publish(url, "bench-token", args.size_mb, work)
        results = {}
        for name, timer in (("ours", lambda c: time_ours(args.bin_dir, url, c)),
                            ("reference", lambda c: time_reference(url, c))):
            cold, warm = [], []
            for i in range(args.repeat):
                cache = work / f"cache-{name}-{i}"
                cold.append(timer(cache))
                warm.append(timer(cache))
                shutil.rmtree(cache)
            results[name] = {"cold": min(cold), "warm": min(warm)}
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    total_mb = args.size_mb * len(VARIANTS)
    print(f"kernel: {len(VARIANTS)} variants x {args.size_mb} MB = {total_mb} MB, best of {args.repeat}")
    for phase in ("cold", "warm"):
        ours, ref = results["ours"][phase], results["reference"][phase]
        print(f"{phase:5} ours {ours:8.3f} s   reference {ref:8.3f} s   ratio {ref / ours:6.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
