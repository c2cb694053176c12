# SPDX-License-Identifier: Apache-2.0
"""What checking uploaded variants costs `kernelhub serve` (issue 20 item 9): the commit's
latency with the check queued after it, against a server without it, and how long the check
itself takes.

    .venv/bin/python bench/hub/variant_checks.py --without-bin-dir DIR [--bin-dir DIR]
        [--variant DIR] [--pad-mb 0,100] [--repeat 5]

DIR are folders holding a `kernelhub` binary: --bin-dir this tree's (with the check after each
commit), --without-bin-dir one built before it (checks at the first page view). The variant is
examples/relu built for cpu (built here unless --variant names a built variant folder), signed
with a key both servers trust; with --pad-mb N its library is padded with N MB of random bytes
(a large CUDA build's size). Every upload is a fresh repository with fresh random bytes, so no
hash is remembered from an earlier one. Each upload sends its files as huggingface_hub does
(preupload_lfs_files: the library through Git LFS), then the commit is POSTed alone, timed from
the request to the answer:
  commit       the NDJSON commit's latency (lfsFile lines and the small files inline)
  verified     with: from the commit's answer to the record being there (the API polled every
               2 ms); without: the first page view of the new revision, which checks then
  first page   the first kernel page of the new revision after that (with: reads the record)
Medians over --repeat uploads to each server, the two servers taking turns.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

from download import start_server  # noqa: E402  (this folder is on sys.path when run)

REPO_ROOT = Path(__file__).resolve().parents[2]
TOKEN = "bench-token"


def build_relu(kernel_builder: Path, work: Path) -> Path:
    kernel = work / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build"))
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    subprocess.run([str(kernel_builder), "build", str(kernel), "--python", sys.executable,
                    "--skip-checks"], check=True, capture_output=True)
    (variant,) = [p for p in (kernel / "build").iterdir() if p.is_dir() and p.name != ".kernelhub"]
    return variant


def fresh_kernel(source: Path, folder: Path, pad_mb: int, kernel_builder: Path, key: Path) -> Path:
    """A copy of the variant under folder/build, its library grown by `pad_mb` MB of random
    bytes (at least a few, so every copy is new), hashed and signed again."""
    variant = folder / "build" / source.name
    shutil.copytree(source, variant, ignore=shutil.ignore_patterns("metadata.json.sigstore"))
    (library,) = variant.glob("*.so")
    with library.open("ab") as f:
        f.write(os.urandom(16))
        for _ in range(pad_mb):
            f.write(os.urandom(1 << 20))
    for command in (["hash", "--write", str(variant)], ["sign", str(folder), "--key", str(key)]):
        subprocess.run([str(kernel_builder), *command], check=True, capture_output=True)
    return variant


def request(url: str, method="GET", body: bytes | None = None, content_type=None):
    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("Authorization", f"Bearer {TOKEN}")
    if content_type:
        req.add_header("Content-Type", content_type)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=600) as answer:
        return answer.read()


def upload_then_time(url: str, repo: str, variant: Path, side: str) -> dict:
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=url, token=TOKEN)
    api.create_repo(repo, repo_type="kernel")
    additions = [CommitOperationAdd(path_in_repo=f"build/{variant.name}/{p.name}",
                                    path_or_fileobj=str(p))
                 for p in sorted(variant.iterdir()) if p.is_file()]
    api.preupload_lfs_files(repo, additions, repo_type="kernel")
    lines = [json.dumps({"key": "header", "value": {"summary": "upload"}})]
    for op in additions:
        if op._upload_mode == "lfs":
            lines.append(json.dumps({"key": "lfsFile", "value": {
                "path": op.path_in_repo, "algo": "sha256", "oid": op.upload_info.sha256.hex(),
                "size": op.upload_info.size}}))
        else:
            lines.append(json.dumps({"key": "file", "value": {
                "path": op.path_in_repo, "encoding": "base64",
                "content": base64.b64encode(Path(op.path_or_fileobj).read_bytes()).decode()}}))
    body = ("\n".join(lines) + "\n").encode()
    start = time.perf_counter()
    answer = json.loads(request(f"{url}/api/kernels/{repo}/commit/main", "POST", body,
                                "application/x-ndjson"))
    answered = time.perf_counter()
    sha = answer["commitOid"]
    result = {"commit": answered - start, "lfs": sum(op._upload_mode == "lfs" for op in additions)}
    page = f"{url}/kernels/{repo}/tree/{sha}"
    if side == "with":
        while True:
            checks = json.loads(request(f"{url}/api/kernels/{repo}/variant-checks/{sha}"))
            if not checks["verifying"]:
                break
            time.sleep(0.002)
        result["verified"] = time.perf_counter() - answered
        assert [v["checkedAt"] for v in checks["variants"]] == ["upload"], checks
        assert checks["variants"][0]["digest"]["matches"] is True, checks
        assert checks["variants"][0]["signature"]["valid"] is True, checks
        start = time.perf_counter()
        html = request(page)
        result["first page"] = time.perf_counter() - start
    else:
        start = time.perf_counter()
        html = request(page)
        result["verified"] = time.perf_counter() - start
        start = time.perf_counter()
        html = request(page)
        result["first page"] = time.perf_counter() - start
    assert b"files match" in html and b"class=\"verified\">valid<" in html, html[-3000:]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=REPO_ROOT / ".venv" / "bin")
    parser.add_argument("--without-bin-dir", type=Path, required=True)
    parser.add_argument("--variant", type=Path, help="a built variant folder (default: build relu)")
    parser.add_argument("--pad-mb", default="0,100")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    kernel_builder = args.bin_dir / "kernel-builder"

    work = Path(tempfile.mkdtemp(prefix="kernelhub-bench-checks-"))
    servers = []
    try:
        source = args.variant or build_relu(kernel_builder, work)
        key = work / "team.pem"
        subprocess.run([str(kernel_builder), "keygen", "--output", str(key)], check=True,
                       capture_output=True)
        (work / "tokens").write_text(TOKEN + "\n")
        results: dict = {}
        urls = {}
        for side, bin_dir in (("without", args.without_bin_dir), ("with", args.bin_dir)):
            root = work / f"root-{side}"
            (root / "keys").mkdir(parents=True)
            shutil.copy(key.with_suffix(".pub"), root / "keys" / "team.pub")
            (root / "config.toml").write_text('[signing]\ntrusted-keys = ["keys/team.pub"]\n')
            server, urls[side] = start_server(bin_dir, root, work / "tokens")
            servers.append(server)
        # The two servers take turns, so a change in the machine's load falls on both.
        for pad in (int(x) for x in args.pad_mb.split(",")):
            for i in range(args.repeat):
                for side, url in urls.items():
                    variant = fresh_kernel(source, work / f"k-{side}-{pad}-{i}", pad,
                                           kernel_builder, key)
                    size = sum(p.stat().st_size for p in variant.iterdir())
                    run = upload_then_time(url, f"bench/{side}-{pad}-{i}", variant, side)
                    results.setdefault((side, size), []).append(run)
                    shutil.rmtree(variant.parent.parent)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"{source.name}, signed; medians of {args.repeat} uploads, milliseconds")
    print("| variant | server | commit | verified | first page |")
    print("|---|---|---|---|---|")
    for (side, size), runs in sorted(results.items(),
                                     key=lambda kv: (kv[0][1], kv[0][0] != "without")):
        median = {name: statistics.median(r[name] for r in runs) * 1000
                  for name in ("commit", "verified", "first page")}
        what = "after the answer, on the worker" if side == "with" else "at the first page view"
        print(f"| {size / 2**20:.2f} MiB | {side} | {median['commit']:.1f} | "
              f"{median['verified']:.1f} ({what}) | {median['first page']:.1f} |")
    print(json.dumps({f"{side} {size} bytes": runs for (side, size), runs in results.items()}))


if __name__ == "__main__":
    main()
