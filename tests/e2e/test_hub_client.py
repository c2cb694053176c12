# SPDX-License-Identifier: Apache-2.0
"""Our Hub client (src/kernelhub/hub, driven through `kernelhub-testtool hub`) against
`kernelhub serve`, with the reference huggingface_hub as the oracle for what the server holds:
refs, recursive trees, metadata HEADs, parallel verified downloads, the not-found kinds and
offline mode (hub-api.md §2, §6)."""
import hashlib
import json
from pathlib import Path

from conftest import run
from hub_cache_support import hub_env, last_json, run_python

REPO = "org/client"
FILES = {
    "README.md": b"# client\n",
    "build/torch-cpu/metadata.json": b'{"version": 1}\n',
    "build/torch-cpu/client/a b.txt": b"a name with a space\n",
    "build/torch-cpu/client/empty.txt": b"",
    "build/torch-cpu/client/big.bin": bytes(range(256)) * 4096,
}


def publish(hub_server, tmp_path: Path) -> dict:
    """Creates the kernel repo with huggingface_hub and puts FILES on main and branch v1."""
    folder = tmp_path / "files"
    for path, content in FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)
    env = hub_env(hub_server.url, tmp_path / "hf-cache", HF_TOKEN=hub_server.token)
    result = run_python(f"""
        import json
        from huggingface_hub import HfApi
        api = HfApi()
        api.create_repo({REPO!r}, repo_type="model")
        api.upload_folder(repo_id={REPO!r}, folder_path={str(folder)!r})
        api.create_branch({REPO!r}, branch="v1")
        refs = api.list_repo_refs({REPO!r})
        print(json.dumps({{b.name: b.target_commit for b in refs.branches}}))
    """, env)
    return last_json(result)


def hub(testtool, hub_server, tmp_path, *args, **env):
    merged = hub_env(hub_server.url, tmp_path / "hf-cache", **env)
    result = run([testtool, "hub", *args, "--type", "model"], env=merged)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_refs_tree_and_metadata_match_the_server(testtool, hub_server, tmp_path):
    branches = publish(hub_server, tmp_path)
    refs = hub(testtool, hub_server, tmp_path, "refs", REPO)
    assert refs["ok"] and refs["branches"] == branches

    tree = hub(testtool, hub_server, tmp_path, "tree", REPO, "v1", "--recursive")
    files = {e["path"]: e for e in tree["entries"]
             if e["type"] == "file" and e["path"] != ".gitattributes"}
    assert set(files) == set(FILES)
    for path, content in FILES.items():
        # big.bin is binary, so it went through LFS: the tree's oid is its pointer's blob id.
        stored = content
        if path.endswith("big.bin"):
            stored = (f"version https://git-lfs.github.com/spec/v1\noid sha256:"
                      f"{hashlib.sha256(content).hexdigest()}\nsize {len(content)}\n").encode()
        blob = b"blob %d\0" % len(stored) + stored
        assert files[path]["oid"] == hashlib.sha1(blob).hexdigest()
        assert files[path]["size"] == len(content)

    top = hub(testtool, hub_server, tmp_path, "tree", REPO, branches["v1"], "build")
    assert [e["path"] for e in top["entries"]] == ["build/torch-cpu"]

    meta = hub(testtool, hub_server, tmp_path, "metadata", REPO, "v1", "build/torch-cpu/client/a b.txt")
    assert meta["ok"] and meta["commit"] == branches["v1"]
    assert meta["size"] == len(FILES["build/torch-cpu/client/a b.txt"])


def test_parallel_download_is_byte_identical(testtool, hub_server, tmp_path):
    branches = publish(hub_server, tmp_path)
    dest = tmp_path / "dest"
    out = hub(testtool, hub_server, tmp_path, "download", REPO, branches["v1"], dest, *FILES)
    assert out["ok"], out
    for path, content in FILES.items():
        assert (dest / path).read_bytes() == content


def test_resume_from_a_partial_file(testtool, hub_server, tmp_path):
    branches = publish(hub_server, tmp_path)
    dest = tmp_path / "dest"
    path = "build/torch-cpu/client/big.bin"
    (dest / path).parent.mkdir(parents=True)
    (dest / path).write_bytes(FILES[path][:100_000])
    out = hub(testtool, hub_server, tmp_path, "download", REPO, branches["v1"], dest, path)
    assert out["ok"], out
    assert (dest / path).read_bytes() == FILES[path]


def test_not_found_kinds_and_offline(testtool, hub_server, tmp_path):
    branches = publish(hub_server, tmp_path)
    missing_repo = hub(testtool, hub_server, tmp_path, "refs", "org/nope")
    assert missing_repo["kind"] == "repo_not_found"
    missing_rev = hub(testtool, hub_server, tmp_path, "info", REPO, "no-such-branch")
    assert missing_rev["kind"] == "revision_not_found"
    missing_file = hub(testtool, hub_server, tmp_path, "metadata", REPO, "v1", "nope.txt")
    assert missing_file["kind"] == "entry_not_found"
    assert missing_file["repo_commit"] == branches["v1"]

    offline = hub(testtool, hub_server, tmp_path, "refs", REPO, HF_HUB_OFFLINE="1")
    assert offline["kind"] == "offline"
