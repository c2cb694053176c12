# SPDX-License-Identifier: Apache-2.0
"""A 2 GiB file (sparse, made at test time) through Git LFS with bounded memory (issue 19):
huggingface_hub 2.4.0 uploads it to `kernelhub serve` multipart (64 MiB parts, each spooled to
disk by the server, then joined and hashed in 1 MiB blocks) and downloads it through the
resolve redirect; the server's and the client's peak resident memory (VmHWM) grow by less than
64 MiB over their idle peaks. Memory bounds, not timings. KERNELHUB_LFS_TEST_BYTES sets another
size."""
import json
import os
from pathlib import Path

import pytest

from conftest import start_hub_server, stop_hub_server
from serve_helpers import run_client

SIZE = int(os.environ.get("KERNELHUB_LFS_TEST_BYTES", str(2 << 30)))
MAX_GROWTH = 64 << 20


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


# The client's own peak over the call, against its peak once huggingface_hub is imported.
CLIENT_PEAK = """
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_2_gib_lfs_upload_and_download_with_bounded_memory(kernelhub_bin, tmp_path):
    big = tmp_path / "big.bin"
    with big.open("wb") as f:
        f.truncate(SIZE)
        # A few non-zero bytes in the last part, so a wrong join or offset shows in the hash.
        f.seek(SIZE - 3)
        f.write(b"end")
    server = start_hub_server(kernelhub_bin, tmp_path)
    try:
        run_client(server, tmp_path / "hf", """
            from huggingface_hub import HfApi
            HfApi().create_repo("org/big")
        """)
        idle = peak_rss(server.process.pid)
        uploaded = run_client(server, tmp_path / "hf", CLIENT_PEAK + f"""
import json
from huggingface_hub import HfApi
api = HfApi()
before = peak()
api.upload_file(path_or_fileobj={str(big)!r}, path_in_repo="weights/big.bin", repo_id="org/big")
entry = api.get_paths_info("org/big", ["weights/big.bin"])[0]
print(json.dumps({{"growth": peak() - before, "size": entry.size, "sha256": entry.lfs.sha256}}))
""")
        after_upload = peak_rss(server.process.pid)
        objects = list((server.root / "models" / "org" / "big.git" / "lfs" / "objects").rglob("*"))
        stored = [p for p in objects if p.is_file()]
        assert [p.stat().st_size for p in stored] == [SIZE]
        assert stored[0].name == uploaded["sha256"]
        downloaded = run_client(server, tmp_path / "hf", CLIENT_PEAK + """
import hashlib, json, os
from huggingface_hub import hf_hub_download
before = peak()
path = hf_hub_download("org/big", "weights/big.bin")
growth = peak() - before
digest = hashlib.sha256()
with open(path, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        digest.update(block)
print(json.dumps({"growth": growth, "blob": os.path.basename(os.path.realpath(path)),
                  "size": os.path.getsize(path), "sha256": digest.hexdigest()}))
""")
        after_download = peak_rss(server.process.pid)
    finally:
        stop_hub_server(server)
    print(f"{SIZE >> 20} MiB through LFS: server VmHWM +{(after_upload - idle) >> 20} MiB (upload), "
          f"+{(after_download - idle) >> 20} MiB (both); huggingface_hub +{uploaded['growth'] >> 20} "
          f"MiB (upload), +{downloaded['growth'] >> 20} MiB (download)")
    assert uploaded["size"] == SIZE
    assert downloaded["size"] == SIZE
    assert downloaded["blob"] == downloaded["sha256"] == uploaded["sha256"]
    assert after_upload - idle < MAX_GROWTH
    assert after_download - idle < MAX_GROWTH
    assert uploaded["growth"] < MAX_GROWTH
    assert downloaded["growth"] < MAX_GROWTH
