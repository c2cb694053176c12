# SPDX-License-Identifier: Apache-2.0
"""A 1 GB kernel variant through Git LFS, ours against huggingface_hub, both against
`kernelhub serve`, in one run.

    .venv/bin/python bench/hub/lfs.py [--bin-dir DIR] [--size-mb 1024] [--repeat 1]

The variant holds a random library of SIZE MB (binary, so both clients must use LFS) and its
metadata. Each phase is a whole process, timed from its start to its exit, with its peak
resident memory (ru_maxrss from wait4):
  upload    ours        `kernel-builder upload DIR --no-check` (preupload, LFS batch, multipart
                        parts streamed from the file, completion, lfsFile commit)
            reference   `HfApi().upload_folder(build/)` with HF_HUB_DISABLE_XET=1 (the same
                        LFS path; hf_xet would need a Xet server)
  download  ours        `kernelhub download REPO --revision main --all-variants`, empty cache
            reference   `snapshot_download(REPO, allow_patterns="build/*")`, empty cache
ratio = reference / ours (above 1: ours is faster, or uses less memory). Each upload goes to a
fresh repository, so neither finds the other's objects already stored.
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

# The same throw-away server the download bench starts (this folder is on sys.path when run).
from download import start_server

REPO_ROOT = Path(__file__).resolve().parents[2]
VARIANT = "torch-cpu"


def env_for(url: str, token: str, home: Path) -> dict:
    env = dict(os.environ, HF_ENDPOINT=url, HF_TOKEN=token, HF_HOME=str(home),
               HF_HUB_CACHE=str(home / "hub"), NO_PROXY="127.0.0.1,localhost",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_XET="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1")
    for name in ("KERNELS_CACHE", "HF_HUB_OFFLINE"):
        env.pop(name, None)
    return env


def measured(args: list, env: dict) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one process run to its end; fails on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    out, err = proc.stdout.read(), proc.stderr.read()
    if proc.returncode != 0:
        sys.exit(f"{args[:3]} failed ({proc.returncode}):\n{out.decode()}\n{err.decode()}")
    return elapsed, usage.ru_maxrss * 1024


def make_kernel(folder: Path, repo: str, size_mb: int) -> None:
    variant = folder / "build" / VARIANT
    (variant / "big").mkdir(parents=True)
    (folder / "build.toml").write_text(
        f'[general]\nname = "big"\nversion = 1\nbackends = ["cpu"]\nedition = 5\n'
        f'license = "apache-2.0"\n\n[general.hub]\nrepo-id = "{repo}"\n\n[torch-noarch]\n')
    (variant / "metadata.json").write_text(json.dumps(
        {"name": "big", "id": "_big_bench", "version": 1, "license": "apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "big" / "__init__.py").write_text("")
    with (variant / "big" / "_big.so").open("wb") as f:
        f.write(b"\x7fELF\x00")
        for _ in range(size_mb):
            f.write(os.urandom(1 << 20))


def python(code: str) -> list:
    return [sys.executable, "-c", code]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin")
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kernelhub-bench-lfs-"))
    token = "bench-token"
    (work / "tokens").write_text(token + "\n")
    server, url = start_server(args.bin_dir, work / "root", work / "tokens")
    results: dict = {"ours": {}, "reference": {}}
    try:
        for i in range(args.repeat):
            for side in ("ours", "reference"):
                repo = f"bench/{side}-{i}"
                kernel = work / f"kernel-{side}-{i}"
                make_kernel(kernel, repo, args.size_mb)
                env = env_for(url, token, work / f"home-{side}-{i}")
                subprocess.run(python(f"from huggingface_hub import HfApi\n"
                                      f"HfApi().create_repo({repo!r}, repo_type='kernel')"),
                               env=env, check=True)
                if side == "ours":
                    upload = [str(args.bin_dir / "kernel-builder"), "upload", str(kernel),
                              "--no-check", "--branch", "main"]
                else:
                    upload = python(
                        "from huggingface_hub import HfApi\n"
                        f"HfApi().upload_folder(repo_id={repo!r}, repo_type='kernel', "
                        f"folder_path={str(kernel / 'build')!r}, path_in_repo='build')")
                results[side].setdefault("upload", []).append(measured(upload, env))
                shutil.rmtree(kernel)
                fresh = env_for(url, token, work / f"down-{side}-{i}")
                if side == "ours":
                    download = [str(args.bin_dir / "kernelhub"), "download", repo, "--revision",
                                "main", "--all-variants"]
                else:
                    download = python(
                        "from huggingface_hub import snapshot_download\n"
                        f"snapshot_download({repo!r}, repo_type='kernel', revision='main', "
                        "allow_patterns='build/*')")
                results[side].setdefault("download", []).append(measured(download, fresh))
                shutil.rmtree(work / f"down-{side}-{i}")
        server_peak = 0
        for line in Path(f"/proc/{server.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                server_peak = int(line.split()[1]) * 1024
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"one variant with a {args.size_mb} MB library, through LFS, best of {args.repeat}; "
          f"ratio = reference / ours")
    for phase in ("upload", "download"):
        ours_t, ours_m = min(t for t, _ in results["ours"][phase]), max(m for _, m in results["ours"][phase])
        ref_t, ref_m = (min(t for t, _ in results["reference"][phase]),
                        max(m for _, m in results["reference"][phase]))
        print(f"{phase:8} ours {ours_t:7.2f} s {ours_m / 2**20:7.1f} MiB   reference {ref_t:7.2f} s "
              f"{ref_m / 2**20:7.1f} MiB   time ratio {ref_t / ours_t:5.2f}x   memory ratio "
              f"{ref_m / ours_m:5.2f}x")
    print(f"server peak RSS over the run: {server_peak / 2**20:.1f} MiB")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
