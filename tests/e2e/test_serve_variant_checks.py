# SPDX-License-Identifier: Apache-2.0
"""Issue 20 item 9: `kernelhub serve` verifies a kernel's variants when they are uploaded, not
when a page first shows them, and its kernel page shows that check and marks a variant whose
files changed after signing.

A variant signed with a key the hub trusts (`kernel-builder keygen`, `hash --write`, `sign`),
with a binary library that huggingface_hub uploads through Git LFS, is published with
`HfApi.upload_folder`. The hub answers the commit and checks the variant on its worker; the
test waits for `GET /api/kernels/{repo}/variant-checks/{rev}` to stop saying "verifying"
(nothing is timed) and finds the record under the repository before any page was shown. Then
the library is replaced without signing again: the page, read in headless Chromium, marks the
mismatch. A restart keeps the records.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, start_hub_server, stop_hub_server
from headless_browser import CHROMIUM, Browser, artifacts_dir
from hub_cache_support import publish, run_python
from serve_helpers import http, wait_for_variant_checks

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (scripts/setup.sh installs it)")

REPO = "team/relu"
VARIANT = "torch-cpu"
LIBRARY = "_relu_cpu_0key.abi3.so"


def _kernel(kernel_builder, folder: Path, key: Path) -> Path:
    """A signed noarch cpu variant under folder/build; returns the variant folder."""
    variant = folder / "build" / VARIANT
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(
        {"id": "_relu_cpu_0key", "name": "relu", "version": 1, "license": "apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text("def relu(x):\n    return x.clamp(min=0)\n")
    # Binary: huggingface_hub's preupload gets "lfs" for it, so it travels through Git LFS.
    (variant / LIBRARY).write_bytes(b"\x7fELF\x02\x01\x01\x00" + os.urandom(256 << 10))
    for command in (["hash", "--write", str(variant)], ["sign", str(folder), "--key", str(key)]):
        subprocess.run([str(kernel_builder), *command], check=True, capture_output=True)
    return variant


@pytest.fixture
def signed_hub(kernel_builder, kernelhub_bin, tmp_path):
    key = tmp_path / "team.pem"
    subprocess.run([str(kernel_builder), "keygen", "--output", str(key), "--algorithm",
                    "ecdsa-p256"], check=True, capture_output=True)
    (tmp_path / "hub-root" / "keys").mkdir(parents=True)
    (tmp_path / "hub-root" / "keys" / "team.pub").write_bytes(key.with_suffix(".pub").read_bytes())
    config = ("[organizations.team]\ntrustedKernelPublisher = true\n\n"
              "[signing]\ntrusted-keys = [\"keys/team.pub\"]\n")
    server = start_hub_server(kernelhub_bin, tmp_path, config)
    server.config = config
    server.key = key
    status, _, body = http(server, "GET", "/api/kernelhub/trusted-keys")
    assert status == 200, body
    server.hint = json.loads(body)["keys"][0]["hint"]
    yield server
    stop_hub_server(server)


def _upload_file(server, path_in_repo: str, file: Path) -> str:
    """huggingface_hub's upload_file of `file` to main of REPO; returns the commit id."""
    result = run_python(f"""
        import json
        from huggingface_hub import HfApi
        api = HfApi(endpoint={server.url!r}, token={server.token!r})
        info = api.upload_file(path_or_fileobj={str(file)!r}, path_in_repo={path_in_repo!r},
                               repo_id={REPO!r}, repo_type="kernel",
                               commit_message="Replace the library, not signing again")
        print(json.dumps(info.oid))
    """, {"HF_ENDPOINT": server.url, "NO_PROXY": "127.0.0.1,localhost",
          "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1"})
    return json.loads(result.stdout.strip().splitlines()[-1])


def _records(server) -> dict:
    """The hub's check records of REPO, by tree id."""
    folder = server.root / "kernels" / "team" / "relu.git" / "kernelhub" / "variant-checks"
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def _row(server, browser, revision="main"):
    """The kernel page's row for VARIANT at `revision` (its element and its cells' text) and the
    page."""
    doc = browser.load(f"{server.url}/kernels/{REPO}/tree/{revision}")
    [row] = [tr for tr in doc.by_id("variant-details").iter("tr")
             if tr.attrs.get("data-variant") == VARIANT]
    [cells] = row.rows()
    return row, cells, doc


def test_an_upload_is_verified_before_any_page_view_and_a_later_change_is_marked(
        signed_hub, kernel_builder, tmp_path):
    variant = _kernel(kernel_builder, tmp_path / "kernel", signed_hub.key)
    uploaded = publish(signed_hub.url, signed_hub.token, REPO, tmp_path / "kernel")

    # No page has been shown: what follows is the check the hub ran after the commit.
    checks = wait_for_variant_checks(signed_hub, f"kernels/{REPO}", "main")
    assert checks["commit"] == uploaded
    [entry] = checks["variants"]
    assert entry["name"] == VARIANT and entry["state"] == "recorded", entry
    assert (entry["checkedAt"], entry["checkedCommit"]) == ("upload", uploaded)
    assert entry["digest"] == {"matches": True, "detail": ""}
    assert entry["signature"] == {"valid": True, "detail": f"key {signed_hub.hint}"}
    records = _records(signed_hub)
    assert list(records) == [entry["tree"]]
    assert records[entry["tree"]]["origin"] == "upload"
    assert records[entry["tree"]]["commit"] == uploaded
    # The library went through LFS: the check hashed its object, not the pointer.
    status, _, body = http(signed_hub, "GET",
                           f"/api/kernels/{REPO}/tree/main/build/{VARIANT}?expand=true")
    assert status == 200
    assert any(item["path"].endswith(LIBRARY) and item.get("lfs")
               for item in json.loads(body)), body

    with Browser() as browser:
        row, cells, _ = _row(signed_hub, browser)
        assert cells[3:5] == ["sha256 over 2 files: files match", f"valid (key {signed_hub.hint})"]
        assert cells[5] == f"at upload ({uploaded[:12]})"
        assert row.find_all("a")[-1].attrs["href"] == f"/kernels/{REPO}/commit/{uploaded}"
        assert "class" not in row.attrs

        # The library replaced on the hub, metadata.json and its signature left as they were.
        replaced = tmp_path / LIBRARY
        replaced.write_bytes((variant / LIBRARY).read_bytes() + b"\x00")
        changed = _upload_file(signed_hub, f"build/{VARIANT}/{LIBRARY}", replaced)
        checks = wait_for_variant_checks(signed_hub, f"kernels/{REPO}", "main")
        [entry] = checks["variants"]
        assert (entry["checkedAt"], entry["checkedCommit"]) == ("upload", changed)
        assert entry["digest"]["matches"] is False
        assert entry["digest"]["detail"].startswith(f"File hash mismatch for {LIBRARY}: expected: ")
        assert entry["signature"]["valid"] is True  # it covers metadata.json, which is unchanged
        assert len(_records(signed_hub)) == 2

        row, cells, doc = _row(signed_hub, browser)
        assert row.attrs["class"] == "mismatch"
        assert cells[3].startswith(
            f"sha256 over 2 files: files do not match: File hash mismatch for {LIBRARY}")
        assert cells[4] == f"valid (key {signed_hub.hint}), but the files changed after signing"
        assert cells[5] == f"at upload ({changed[:12]})"
        assert doc.by_id("variant-mismatch").text() == (
            "Files do not match the digest in their metadata.json, so loaders refuse these "
            f"variants: {VARIANT} (changed after signing).")
        # The signed upload's own revision still shows its own, matching check.
        _, cells, _ = _row(signed_hub, browser, uploaded)
        assert cells[3:6] == ["sha256 over 2 files: files match", f"valid (key {signed_hub.hint})",
                              f"at upload ({uploaded[:12]})"]
        browser.screenshot(f"{signed_hub.url}/kernels/{REPO}/tree/main",
                           artifacts_dir(REPO_ROOT) / "kernel-variant-changed-after-signing.png")


def test_the_records_outlive_a_restart(signed_hub, kernel_builder, kernelhub_bin, tmp_path):
    _kernel(kernel_builder, tmp_path / "kernel", signed_hub.key)
    uploaded = publish(signed_hub.url, signed_hub.token, REPO, tmp_path / "kernel")
    wait_for_variant_checks(signed_hub, f"kernels/{REPO}", "main")
    records = _records(signed_hub)
    stop_hub_server(signed_hub)
    restarted = start_hub_server(kernelhub_bin, tmp_path, signed_hub.config)
    try:
        checks = wait_for_variant_checks(restarted, f"kernels/{REPO}", "main")
        assert [(v["state"], v["checkedAt"], v["checkedCommit"]) for v in checks["variants"]] == \
            [("recorded", "upload", uploaded)]
        with Browser() as browser:
            _, cells, _ = _row(restarted, browser)
        assert cells[4:6] == [f"valid (key {signed_hub.hint})", f"at upload ({uploaded[:12]})"]
        # The page read the record: it neither checked the variant again nor wrote a record.
        assert _records(restarted) == records
    finally:
        stop_hub_server(restarted)
