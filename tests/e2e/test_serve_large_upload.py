# SPDX-License-Identifier: Apache-2.0
"""A 100 MB file uploaded with huggingface_hub's upload_file to `kernelhub serve` (issue 15
item 4) on a hub whose operator turned LFS off (`[storage] lfs-threshold = false`; by default
such a file goes through LFS, as on the Hub: test_serve_lfs.py): preupload answers "regular",
so the file travels base64 in the commit's NDJSON; the server spools the body to disk and
decodes it into a git blob piece by piece, and sends it back inflated a block at a time. The download (whole and in ranges) is byte-identical, and
the server's peak resident memory (VmHWM) grows by far less than the file over the upload and
the download: a memory bound, not a timing."""
import hashlib
import os
from pathlib import Path

import pytest

from conftest import start_hub_server, stop_hub_server
from serve_helpers import http, run_client

SIZE = 100 * 1024 * 1024
# Well under the file's size: the body (133 MB of base64), the decoded bytes or the mapped
# spool file held whole would each go far over it.
MAX_GROWTH = 30 * 1024 * 1024


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_100_mb_upload_file_streams_to_disk_and_downloads_identical(kernelhub_bin, tmp_path):
    hub_server = start_hub_server(kernelhub_bin, tmp_path, "[storage]\nlfs-threshold = false\n")
    try:
        check_100_mb_round_trip(hub_server, tmp_path)
    finally:
        stop_hub_server(hub_server)


def check_100_mb_round_trip(hub_server, tmp_path):
    big = tmp_path / "big.bin"
    # Random bytes in 1 MiB pieces: not compressible, so git's zlib cannot hide a copy.
    with big.open("wb") as out:
        for _ in range(SIZE // (1 << 20)):
            out.write(os.urandom(1 << 20))
    digest = hashlib.sha256(big.read_bytes()).hexdigest()
    run_client(hub_server, tmp_path / "hf", """
        from huggingface_hub import HfApi
        HfApi().create_repo("org/big")
    """)
    before = peak_rss(hub_server.process.pid)
    result = run_client(hub_server, tmp_path / "hf", f"""
        import hashlib, json
        from huggingface_hub import HfApi, hf_hub_download
        api = HfApi()
        info = api.upload_file(path_or_fileobj={str(big)!r}, path_in_repo="weights/big.bin",
                               repo_id="org/big")
        entry = api.get_paths_info("org/big", ["weights/big.bin"])[0]
        print(json.dumps({{"oid": info.oid, "size": entry.size}}))
    """)
    after_upload = peak_rss(hub_server.process.pid)
    downloaded = run_client(hub_server, tmp_path / "hf", """
        import hashlib, json
        from huggingface_hub import hf_hub_download
        path = hf_hub_download("org/big", "weights/big.bin")
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        print(json.dumps(h.hexdigest()))
    """)
    # Ranges are cut from the inflated stream too: the start is read past, the end stops it.
    content = big.read_bytes()
    status, _, middle = http(hub_server, "GET", "/org/big/resolve/main/weights/big.bin",
                             headers={"Range": "bytes=50000000-50000099"})
    assert status == 206 and middle == content[50_000_000:50_000_100]
    status, _, tail = http(hub_server, "GET", "/org/big/resolve/main/weights/big.bin",
                           headers={"Range": "bytes=-1000"})
    assert status == 206 and tail == content[-1000:]
    after_download = peak_rss(hub_server.process.pid)
    growth = after_upload - before
    total = after_download - before
    print(f"server VmHWM growth for a {SIZE >> 20} MiB file: {growth / 2**20:.1f} MiB over the "
          f"upload, {total / 2**20:.1f} MiB over the upload and the downloads")
    assert result["size"] == SIZE
    assert downloaded == digest
    assert growth < MAX_GROWTH, f"peak RSS grew by {growth / 2**20:.1f} MiB in the upload"
    assert total < MAX_GROWTH, f"peak RSS grew by {total / 2**20:.1f} MiB with the downloads"
