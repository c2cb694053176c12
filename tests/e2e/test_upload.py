# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder upload` against `kernelhub serve` (builder.md §8, issue 5): the reference
huggingface_hub downloads byte-identical files, a second upload reports no changes, the card
lands on main, and stale variants follow the reference's rules."""
import hashlib
import json
import os
import sys
from pathlib import Path

from conftest import run
from headless_browser import parse
from serve_helpers import http
from hub_cache_support import hub_env, last_json, run_python

REPO = "org/relu"


def metadata(version: int) -> str:
    return json.dumps({"name": "relu", "id": "_relu_upload_test", "version": version,
                       "license": "apache-2.0", "python-depends": [],
                       "backend": {"type": "cpu"}})


def make_kernel(folder: Path, variants, version=1, extra=b"") -> Path:
    """A kernel directory as `kernel-builder build` leaves it: build.toml naming the Hub repo,
    build/<variant>/ with metadata, the card and a benchmark."""
    (folder / "build").mkdir(parents=True, exist_ok=True)
    (folder / "build.toml").write_text(
        f'[general]\nname = "relu"\nversion = {version}\nbackends = ["cpu"]\n'
        f'edition = 5\nlicense = "apache-2.0"\n\n[general.hub]\nrepo-id = "{REPO}"\n\n'
        '[torch-noarch]\n')
    for variant in variants:
        root = folder / "build" / variant
        (root / "relu").mkdir(parents=True, exist_ok=True)
        (root / "metadata.json").write_text(metadata(version))
        (root / "relu" / "__init__.py").write_text(f"VARIANT = {variant!r}\n")
        (root / "relu" / "_relu.abi3.so").write_bytes(os.urandom(300_000) + extra)
        (root / "relu" / "a b.txt").write_text("a name with a space\n")
    (folder / "build" / "CARD.md").write_text(
        f"---\nlibrary_name: kernels\n---\n# relu\n\nversion={version}\n")
    (folder / "benchmarks").mkdir(exist_ok=True)
    (folder / "benchmarks" / "benchmark.py").write_text("print('bench')\n")
    (folder / "benchmarks" / "helper.py").write_text("# not uploaded\n")
    return folder


def upload(kernel_builder, hub_server, kernel: Path, tmp_path: Path, *args):
    report = tmp_path / "upload.json"
    env = hub_env(hub_server.url, tmp_path / "hf-cache")
    env["HF_TOKEN"] = hub_server.token
    # The variants are hand-made (no torch library in them): only the upload is tested here.
    result = run([kernel_builder, "upload", kernel, "--no-check", "--output-json", report,
                  *args], env=env)
    assert result.returncode == 0, result.stderr
    return result, json.loads(report.read_text())


def snapshot(hub_server, tmp_path: Path, revision: str) -> dict:
    """Every file of `revision` as huggingface_hub downloads it: {path: sha256}, without the
    .gitattributes the server's first commit holds (as the Hub's does)."""
    result = run_python(f"""
        import hashlib, json
        from pathlib import Path
        from huggingface_hub import snapshot_download
        root = Path(snapshot_download({REPO!r}, repo_type="kernel", revision={revision!r}))
        print(json.dumps({{str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                          for p in root.rglob("*") if p.is_file()
                          and p.name != ".gitattributes"}}))
    """, hub_env(hub_server.url, tmp_path / f"cache-{revision}"))
    return last_json(result)


def local_files(kernel: Path, variants) -> dict:
    files = {}
    for variant in variants:
        root = kernel / "build" / variant
        for path in root.rglob("*"):
            if path.is_file():
                files[f"build/{variant}/{path.relative_to(root)}"] = \
                    hashlib.sha256(path.read_bytes()).hexdigest()
    bench = kernel / "benchmarks" / "benchmark.py"
    files["benchmarks/benchmark.py"] = hashlib.sha256(bench.read_bytes()).hexdigest()
    return files


def test_upload_then_download_is_byte_identical_and_again_is_no_change(
        kernel_builder, hub_server, tmp_path):
    variants = ["torch-cpu", "torch-universal"]
    kernel = make_kernel(tmp_path / "kernel", variants)
    result, report = upload(kernel_builder, hub_server, kernel, tmp_path)
    assert "Found 2 build variant(s)" in result.stdout
    assert "Using branch `v1` (new)" in result.stdout
    assert report["status"] == "uploaded"
    assert report["repo_id"] == REPO and report["branch"] == "v1"
    assert report["url"].endswith("/kernels/org/relu/tree/v1")
    # The URL it prints is the version's file page (issue 15: it answered "no route").
    status, headers, page = http(hub_server, "GET", report["url"][len(hub_server.url):])
    assert status == 200 and headers["Content-Type"].startswith("text/html"), page
    files = parse(page.decode()).by_id("files")
    assert sorted(tr.find("a").text() for tr in files.find_all("tr", class_="dir")) == \
        ["benchmarks/", "build/"]
    assert {c["branch"] for c in report["commits"]} == {"main", "v1"}
    assert all(len(c["commit"]) == 40 for c in report["commits"])

    card = hashlib.sha256((kernel / "build" / "CARD.md").read_bytes()).hexdigest()
    # The card on the version branch too (issue 13 item 6).
    assert snapshot(hub_server, tmp_path, "v1") == dict(local_files(kernel, variants),
                                                        **{"README.md": card})
    main = snapshot(hub_server, tmp_path, "main")
    assert main["README.md"] == card and not any(p.startswith("build/") for p in main)

    again, report = upload(kernel_builder, hub_server, kernel, tmp_path)
    assert "No changes to upload." in again.stdout
    assert report["status"] == "no_changes" and report["commits"] == []


def test_new_version_branch_drops_stale_variants_existing_branch_keeps_others(
        kernel_builder, hub_server, tmp_path):
    kernel = make_kernel(tmp_path / "kernel", ["torch-cpu", "torch-universal"])
    upload(kernel_builder, hub_server, kernel, tmp_path)

    # Version 2 with one variant, on a new branch created from main: no stale variant. Its
    # README.md is version 2's card, not the version 1 card main had (issue 13 item 6).
    kernel2 = make_kernel(tmp_path / "kernel2", ["torch-cpu"], version=2)
    _, report = upload(kernel_builder, hub_server, kernel2, tmp_path)
    assert report["branch"] == "v2" and report["status"] == "uploaded"
    v2 = snapshot(hub_server, tmp_path, "v2")
    card = hashlib.sha256((kernel2 / "build" / "CARD.md").read_bytes()).hexdigest()
    assert v2 == dict(local_files(kernel2, ["torch-cpu"]), **{"README.md": card})

    # The same branch v1 again with only torch-cpu, rebuilt: torch-universal stays, the
    # rebuilt variant replaces the old one, and a file it no longer has is deleted.
    kernel3 = make_kernel(tmp_path / "kernel3", ["torch-cpu"], extra=b"rebuilt")
    (kernel3 / "build" / "torch-cpu" / "relu" / "a b.txt").unlink()
    _, report = upload(kernel_builder, hub_server, kernel3, tmp_path)
    assert report["branch"] == "v1" and report["status"] == "uploaded"
    v1 = snapshot(hub_server, tmp_path, "v1")
    expected = {p: h for p, h in local_files(kernel, ["torch-universal"]).items()}
    expected.update(local_files(kernel3, ["torch-cpu"]))
    expected["README.md"] = hashlib.sha256((kernel3 / "build" / "CARD.md").read_bytes()).hexdigest()
    assert v1 == expected
    assert "version=1" in (kernel3 / "build" / "CARD.md").read_text()


def test_upload_errors_are_clear(kernel_builder, hub_server, tmp_path):
    kernel = make_kernel(tmp_path / "kernel", ["torch-cpu"])
    env = hub_env(hub_server.url, tmp_path / "hf-cache")
    env["HF_TOKEN"] = "wrong-token"
    result = run([kernel_builder, "upload", kernel, "--no-check"], env=env)
    assert result.returncode != 0
    assert "kernel-builder: error:" in result.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    result = run([kernel_builder, "upload", empty, "--repo-id", REPO], env=env)
    assert result.returncode != 0 and "no build variants" in result.stderr

    offline = dict(env, HF_TOKEN=hub_server.token, HF_HUB_OFFLINE="1")
    result = run([kernel_builder, "upload", kernel, "--no-check"], env=offline)
    assert result.returncode != 0 and "offline" in result.stderr


def test_card_template_is_filled_when_the_build_has_no_card(kernel_builder, hub_server, tmp_path):
    kernel = make_kernel(tmp_path / "kernel", ["torch-cpu"])
    (kernel / "build" / "CARD.md").unlink()
    (kernel / "CARD.md").write_text("# {{ repo_id }} version {{ version }}\n")
    upload(kernel_builder, hub_server, kernel, tmp_path)
    result = run_python(f"""
        from pathlib import Path
        from huggingface_hub import hf_hub_download
        print(Path(hf_hub_download({REPO!r}, "README.md", repo_type="kernel")).read_text())
    """, hub_env(hub_server.url, tmp_path / "cache-card"))
    assert f"# {REPO} version 1" in result.stdout
