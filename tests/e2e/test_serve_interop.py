# SPDX-License-Identifier: Apache-2.0
"""The reference huggingface_hub against `kernelhub serve`: uploads, refs, trees and downloads
for model and kernel repositories (issue 5's interop acceptance, hub-api.md §4)."""
import hashlib

from serve_helpers import commit, http, run_client

FILES = {
    "config.json": b'{"a": 1}\n',
    "weights/sub/extra.bin": bytes(range(256)) * 40,
    "a b.txt": b"a name with a space\n",
}


def write_folder(folder, files):
    for path, content in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def test_model_upload_refs_and_downloads(hub_server, tmp_path):
    folder = tmp_path / "upload"
    write_folder(folder, FILES)
    hf_home = tmp_path / "hf"
    result = run_client(hub_server, hf_home, f"""
        import json
        from pathlib import Path
        from huggingface_hub import HfApi, hf_hub_download, snapshot_download
        api = HfApi()
        api.create_repo("org/m")
        api.create_repo("org/m", exist_ok=True)
        first = api.upload_folder(repo_id="org/m", folder_path={str(folder)!r})
        # the same files again: preupload's oids say nothing changed, so no commit is made
        again = api.upload_folder(repo_id="org/m", folder_path={str(folder)!r})
        api.create_branch("org/m", branch="dev/1")
        api.upload_file(path_or_fileobj=b"dev only", path_in_repo="dev.txt", repo_id="org/m",
                        revision="dev/1")
        api.create_tag("org/m", tag="v1.0", revision="dev/1")
        refs = api.list_repo_refs("org/m")
        sha = api.model_info("org/m").sha
        read = lambda p: Path(p).read_bytes().hex()
        out = {{
            "sha": sha, "first": first.oid, "again": again.oid,
            "branches": sorted(b.name for b in refs.branches),
            "tags": [t.name for t in refs.tags],
            "main": read(hf_hub_download("org/m", "config.json")),
            "branch": read(hf_hub_download("org/m", "dev.txt", revision="dev/1")),
            "tag": read(hf_hub_download("org/m", "dev.txt", revision="v1.0")),
            "sha_nested": read(hf_hub_download("org/m", "weights/sub/extra.bin", revision=sha)),
            "space": read(hf_hub_download("org/m", "a b.txt")),
        }}
        # a cache of its own, so the downloads above do not show up in the snapshot
        snap = Path(snapshot_download("org/m", allow_patterns=["weights/*"],
                                      cache_dir={str(tmp_path / "snap-cache")!r}))
        out["snapshot"] = sorted(str(p.relative_to(snap)) for p in snap.rglob("*") if p.is_file())
        tree = api.list_repo_tree("org/m", recursive=True)
        out["tree"] = sorted((e.path, getattr(e, "blob_id", None)) for e in tree
                             if hasattr(e, "size") and e.__class__.__name__ == "RepoFile")
        print(json.dumps(out))
    """)
    assert result["first"] == result["sha"] == result["again"]
    assert result["branches"] == ["dev/1", "main"]
    assert result["tags"] == ["v1.0"]
    assert bytes.fromhex(result["main"]) == FILES["config.json"]
    assert bytes.fromhex(result["branch"]) == b"dev only"
    assert bytes.fromhex(result["tag"]) == b"dev only"
    assert bytes.fromhex(result["sha_nested"]) == FILES["weights/sub/extra.bin"]
    assert bytes.fromhex(result["space"]) == FILES["a b.txt"]
    assert result["snapshot"] == ["weights/sub/extra.bin"]
    listed = dict(map(tuple, result["tree"]))
    for path, content in FILES.items():
        # The tree's oid is git's blob id, which kernels' lock hashing relies on: of the file
        # itself, or of its LFS pointer for a file the Hub's first .gitattributes tracks (*.bin).
        stored = content
        if path.endswith(".bin"):
            stored = (f"version https://git-lfs.github.com/spec/v1\noid sha256:"
                      f"{hashlib.sha256(content).hexdigest()}\nsize {len(content)}\n").encode()
        git_id = hashlib.sha1(b"blob %d\0" % len(stored) + stored).hexdigest()
        assert listed[path] == git_id


def test_kernel_repo_refs_tree_and_variant_download(hub_server, tmp_path):
    hf_home = tmp_path / "hf"
    run_client(hub_server, hf_home, """
        from huggingface_hub import HfApi
        HfApi().create_repo("org/relu", repo_type="kernel")
        HfApi().create_branch("org/relu", branch="v1", repo_type="kernel")
    """)
    # huggingface_hub refuses create_commit for kernels (kernel-builder uploads them), so
    # the commit goes over the wire directly, as our client sends it.
    variant = {
        "build/torch-cpu/relu/__init__.py": b"def relu(x):\n    return x\n",
        "build/torch-cpu/metadata.json": b'{"version": 1}\n',
        "build/torch-cuda/relu/__init__.py": b"# cuda\n",
    }
    status, _, body = commit(hub_server, "kernels/org/relu", "v1", variant)
    assert status == 200, body
    result = run_client(hub_server, hf_home, """
        import json
        from pathlib import Path
        from huggingface_hub import HfApi, hf_hub_download, snapshot_download
        from huggingface_hub.errors import EntryNotFoundError
        api = HfApi()
        refs = api.list_repo_refs("org/relu", repo_type="kernel")
        sha = [b.target_commit for b in refs.branches if b.name == "v1"][0]
        folders = sorted(e.path for e in api.list_repo_tree(
            "org/relu", path_in_repo="build", repo_type="kernel", revision=sha)
            if e.__class__.__name__ == "RepoFolder")
        try:
            hf_hub_download("org/relu", "kernel-status.toml", repo_type="kernel", revision=sha)
            status = "found"
        except EntryNotFoundError:
            status = "missing"
        snap = Path(snapshot_download("org/relu", repo_type="kernel", revision=sha,
                                      allow_patterns=["build/torch-cpu/*"],
                                      ignore_patterns=["*.pyc", "**/__pycache__/**"]))
        files = sorted(str(p.relative_to(snap)) for p in snap.rglob("*") if p.is_file())
        print(json.dumps({"folders": folders, "status": status, "files": files,
                          "cache": snap.parts[-3]}))
    """)
    assert result["folders"] == ["build/torch-cpu", "build/torch-cuda"]
    assert result["status"] == "missing"
    assert result["files"] == ["build/torch-cpu/metadata.json",
                               "build/torch-cpu/relu/__init__.py"]
    assert result["cache"] == "kernels--org--relu"


def test_tree_pages_follow_absolute_link_headers(hub_server, tmp_path):
    run_client(hub_server, tmp_path / "hf", 'from huggingface_hub import HfApi\n'
               'HfApi().create_repo("org/many")')
    files = {f"f/{i:04}.txt": str(i).encode() for i in range(1005)}
    status, _, body = commit(hub_server, "models/org/many", "main", files)
    assert status == 200, body
    status, headers, _ = http(hub_server, "GET", "/api/models/org/many/tree/main?recursive=true")
    assert status == 200
    assert headers["Link"].startswith(f"<{hub_server.url}/api/models/org/many/tree/main?")
    count = run_client(hub_server, tmp_path / "hf", """
        from huggingface_hub import HfApi
        print(sum(1 for e in HfApi().list_repo_tree("org/many", recursive=True)
                  if e.__class__.__name__ == "RepoFile"))
    """)
    assert count == 1006  # with .gitattributes


def test_resolve_headers_and_range(hub_server, tmp_path):
    run_client(hub_server, tmp_path / "hf", 'from huggingface_hub import HfApi\n'
               'HfApi().create_repo("org/r")')
    content = b"0123456789" * 10
    assert commit(hub_server, "models/org/r", "main", {"d/x.txt": content})[0] == 200
    status, headers, body = http(hub_server, "HEAD", "/org/r/resolve/main/d/x.txt")
    assert status == 200
    assert headers["Content-Length"] == "100"
    git_id = hashlib.sha1(b"blob 100\0" + content).hexdigest()
    assert headers["ETag"] == f'"{git_id}"'
    assert len(headers["X-Repo-Commit"]) == 40
    status, headers, body = http(hub_server, "GET", "/org/r/resolve/main/d/x.txt",
                                 headers={"Range": "bytes=95-"})
    assert status == 206
    assert body == b"56789"
    assert headers["Content-Range"] == "bytes 95-99/100"
    status, headers, _ = http(hub_server, "GET", "/org/r/resolve/main/d/x.txt",
                              headers={"Range": "bytes=100-"})
    assert status == 416
    status, headers, body = http(hub_server, "GET", "/api/agent-harnesses")
    assert status == 404 and body.startswith(b"{")


def test_kernels_trust_check_reads_the_organization_setting(kernelhub_bin, tmp_path):
    import subprocess

    from conftest import HubServer

    root = tmp_path / "root"
    root.mkdir()
    (root / "config.toml").write_text(
        "[organizations.trusted-org]\ntrustedKernelPublisher = true\n"
        "[organizations.other-org]\ntrustedKernelPublisher = false\n")
    process = subprocess.Popen([str(kernelhub_bin), "serve", "--root", str(root), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        server = HubServer(process.stdout.readline().strip(), "", root, process)
        result = run_client(server, tmp_path / "hf", """
            import json
            from kernels.hf_hub import _check_trust_remote_code
            out = {}
            for repo in ("trusted-org/k", "other-org/k", "unknown-org/k"):
                try:
                    _check_trust_remote_code(repo, local_files_only=False,
                                             trust_remote_code=False)
                    out[repo] = "trusted"
                except ValueError as error:
                    out[repo] = "refused"
            print(json.dumps(out))
        """, token=False, telemetry=True)
        assert result == {"trusted-org/k": "trusted", "other-org/k": "refused",
                          "unknown-org/k": "refused"}
    finally:
        process.terminate()
        # SIGTERM stops the server cleanly.
        assert process.wait(timeout=10) == 0
