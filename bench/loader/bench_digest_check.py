# SPDX-License-Identifier: Apache-2.0
"""The digest check of every Hub load (issue 20 item 9) on a large variant: what get_kernel
costs when the variant's files are checked against metadata.json's digest on each load.

    .venv/bin/python bench/loader/bench_digest_check.py [--bin-dir DIR] [--python-dir DIR]
        [--size-mb 100] [--repeat 7] [--calls 20] [--json FILE]

One run writes a cpu variant of --size-mb MiB (an __init__.py and a library-sized file of
random bytes that is never loaded), records its digest with `kernel-builder hash --write`,
signs it with a key made by `kernel-builder keygen`, uploads it to `kernelhub serve`, then
measures `kernelhub.get_kernel(version=1, backend="cpu")` from the package on PYTHONPATH
(--python-dir: a build tree's <build>/python, so two builds can be compared on one machine):
  first     the first load of a fresh process on a cache that holds the files but no stamps
            (every blob checked against its etag, and, with the digest check, its sha256 read
            once and recorded), median of --repeat processes, each on a fresh copy of the cache
  warm      the first load of a fresh process on a stamped cache (median of --repeat)
  repeated  further loads in that process, per call (median of --repeat x --calls)
  offline   warm with HF_HUB_OFFLINE=1
  signed    warm with require_signature=True and the key trusted (the signature check rehashes
            every file on each load: stamps live in the cache, which it must not trust)
torch is imported first in every process and not timed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
REPO = "bench/big"
TOKEN = "bench-token"

CHILD = textwrap.dedent("""
    import json, sys, time
    import torch
    calls, required = int(sys.argv[1]), sys.argv[2] == "1"
    start = time.perf_counter()
    import kernelhub
    load = lambda: kernelhub.get_kernel({repo!r}, version=1, backend="cpu",
                                        require_signature=required)
    kernel = load()
    first = time.perf_counter() - start
    per_call = []
    for _ in range(calls):
        start = time.perf_counter()
        load()
        per_call.append(time.perf_counter() - start)
    print(json.dumps({{"first": first, "calls": per_call, "value": kernel.VALUE,
                      "package": kernelhub.__file__}}))
""").format(repo=REPO)


def run_tool(args: list, env: dict | None = None) -> str:
    result = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def make_variant(work: Path, size_mb: int, bin_dir: Path) -> tuple[Path, Path]:
    kernel = work / "big"
    variant = kernel / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(
        {"id": "_big_cpu_b1g", "name": "big", "version": 1, "license": "apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text("VALUE = 42\n")
    with open(variant / "_big.abi3.so", "wb") as out:
        for _ in range(size_mb):
            out.write(os.urandom(1 << 20))
    run_tool([bin_dir / "kernel-builder", "hash", "--write", variant])
    key = work / "team.pem"
    run_tool([bin_dir / "kernel-builder", "keygen", "--output", key])
    run_tool([bin_dir / "kernel-builder", "sign", kernel, "--key", key])
    return kernel, key.with_suffix(".pub")


def start_server(bin_dir: Path, root: Path, token_file: Path) -> tuple[subprocess.Popen, str]:
    root.mkdir(parents=True)
    (root / "config.toml").write_text("[organizations.bench]\ntrustedKernelPublisher = true\n")
    proc = subprocess.Popen([str(bin_dir / "kernelhub"), "serve", "--root", str(root), "--port",
                             "0", "--token-file", str(token_file)], stdout=subprocess.PIPE,
                            text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        sys.exit(f"kernelhub serve did not print its URL (got {url!r})")
    return proc, url


def upload(url: str, kernel: Path, cache: Path) -> None:
    script = textwrap.dedent(f"""
        from huggingface_hub import HfApi
        api = HfApi(endpoint={url!r}, token={TOKEN!r})
        api.create_repo({REPO!r}, repo_type="kernel", exist_ok=True)
        info = api.upload_folder(repo_id={REPO!r}, repo_type="kernel",
                                 folder_path={str(kernel)!r})
        api.create_branch({REPO!r}, repo_type="kernel", branch="v1", revision=info.oid)
    """)
    env = dict(os.environ, HF_HUB_CACHE=str(cache), NO_PROXY="127.0.0.1,localhost")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"upload failed:\n{result.stderr[-4000:]}")


def child_env(url: str, cache: Path, python_dir: Path | None, offline=False,
              keys: Path | None = None) -> dict:
    env = dict(os.environ, HF_ENDPOINT=url, HF_HUB_CACHE=str(cache),
               HF_HOME=str(cache.parent / "hf-home"), NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    for name in ("KERNELS_CACHE", "HF_HUB_OFFLINE", "LOCAL_KERNELS", "HF_TOKEN",
                 "KERNELHUB_REQUIRE_SIGNATURE", "KERNELHUB_TRUSTED_KEYS"):
        env.pop(name, None)
    if python_dir:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(python_dir),
                                                          env.get("PYTHONPATH")]))
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    if keys:
        env["KERNELHUB_TRUSTED_KEYS"] = str(keys)
    return env


def child(env: dict, calls: int, required: bool = False) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, str(calls), "1" if required else "0"],
                            env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"load failed:\n{result.stderr[-4000:]}")
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["value"] == 42
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin",
                        help="where kernel-builder and kernelhub are")
    parser.add_argument("--python-dir", type=Path,
                        help="a build tree's <build>/python, put first on PYTHONPATH")
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()

    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="kernelhub-digest-bench-"))
    token_file = work / "tokens"
    token_file.write_text(TOKEN + "\n")
    server, url = start_server(args.bin_dir, work / "root", token_file)
    times: dict[str, list[float]] = {}
    try:
        kernel, public_key = make_variant(work, args.size_mb, args.bin_dir)
        upload(url, kernel, work / "upload-cache")
        filled = work / "cache-filled"
        out = child(child_env(url, filled, args.python_dir), 0)
        package = out["package"]
        # A copy of the filled cache without the stamps, for each "first" process.
        unstamped = work / "cache-unstamped"
        shutil.copytree(filled, unstamped, symlinks=True,
                        ignore=shutil.ignore_patterns("verified"))
        for i in range(args.repeat):
            cache = work / f"cache-first-{i}"
            shutil.copytree(unstamped, cache, symlinks=True)
            times.setdefault("first", []).append(
                child(child_env(url, cache, args.python_dir), 0)["first"])
            shutil.rmtree(cache)
            out = child(child_env(url, filled, args.python_dir), args.calls)
            times.setdefault("warm", []).append(out["first"])
            times.setdefault("repeated", []).extend(out["calls"])
            times.setdefault("offline", []).append(
                child(child_env(url, filled, args.python_dir, offline=True), 0)["first"])
            times.setdefault("signed", []).append(
                child(child_env(url, filled, args.python_dir, keys=public_key), 0,
                      required=True)["first"])
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    print(f"package {package}; variant {args.size_mb} MiB; load average (1 min) before "
          f"{load_before[0]:.2f}, after {load_after[0]:.2f}")
    summary = {}
    for phase in ("first", "warm", "repeated", "offline", "signed"):
        values = times[phase]
        summary[phase] = {"median_ms": statistics.median(values) * 1000,
                          "min_ms": min(values) * 1000}
        print(f"{phase:9} median {summary[phase]['median_ms']:9.2f} ms   "
              f"min {summary[phase]['min_ms']:9.2f} ms   ({len(values)} samples)")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "times": times,
                                         "load_average": [load_before, load_after]}, indent=2))


if __name__ == "__main__":
    main()
