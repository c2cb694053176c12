# SPDX-License-Identifier: Apache-2.0
"""The huggingface_hub cache is shared: our client reads what huggingface_hub wrote and the
reference (huggingface_hub, kernels) reads what we wrote, offline, with the same paths and
bytes. Everything is served by `kernelhub serve` (the hub_server fixture)."""
import json
import os

import pytest

from conftest import run
from hub_cache_support import (OTHER_VARIANT, VARIANT, ThrottlingProxy, cache_files, hub_env,
                               last_json, make_kernel, publish, run_python)

REPO = "kh-cache/relu"
CLOSED = "http://127.0.0.1:9"  # nothing listens on the discard port here


@pytest.fixture
def published(hub_server, tmp_path_factory):
    folder = make_kernel(tmp_path_factory.mktemp("kernel"))
    commit = publish(hub_server.url, hub_server.token, REPO, folder)
    return hub_server.url, commit, folder


def ours(kernelhub_bin, args, env):
    result = run([kernelhub_bin, *args, "--json"], env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_ours_reads_a_cache_filled_by_huggingface_hub(published, kernelhub_bin, tmp_path):
    url, commit, folder = published
    cache = tmp_path / "hub"
    hf = last_json(run_python(f"""
        import json
        from huggingface_hub import snapshot_download
        print(json.dumps(snapshot_download({REPO!r}, repo_type="kernel", revision="main",
                                           allow_patterns=["build/{VARIANT}/*"])))
    """, hub_env(url, cache)))
    before = cache_files(cache)

    # Offline, with the endpoint pointing nowhere: the cache alone answers.
    offline = ours(kernelhub_bin, ["download", REPO, "--revision", "main"],
                   hub_env(CLOSED, cache, HF_HUB_OFFLINE=1))
    assert offline["commit"] == commit
    assert offline["variant"] == VARIANT
    assert offline["path"] == os.path.join(hf, "build", VARIANT)
    for rel in ("relu/__init__.py", "relu/sub dir/a b.txt", "relu/empty.txt", "metadata.json"):
        got = open(os.path.join(offline["path"], rel), "rb").read()
        assert got == (folder / "build" / VARIANT / rel).read_bytes()

    # Online through a proxy that counts requests: nothing is transferred again.
    proxy = ThrottlingProxy(url, rate=50_000_000)
    try:
        online = ours(kernelhub_bin, ["download", REPO, "--revision", "main"],
                      hub_env(proxy.url, cache))
    finally:
        proxy.close()
    assert online["path"] == offline["path"]
    assert online["downloaded"] == 0
    assert proxy.gets("/resolve/") == 0
    assert cache_files(cache) == before


def test_huggingface_hub_offline_reads_a_cache_filled_by_ours(published, kernelhub_bin, tmp_path):
    url, commit, folder = published
    cache = tmp_path / "hub"
    result = ours(kernelhub_bin, ["download", REPO, "--version", "1", "--all-variants"],
                  hub_env(url, cache))
    assert result["commit"] == commit
    snapshot = result["path"]
    assert (cache / "kernels--kh-cache--relu" / "refs" / "v1").read_text() == commit

    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                   if p.is_file() and p.parts[len(folder.parts)] == "build")
    hf = last_json(run_python(f"""
        import json
        from huggingface_hub import hf_hub_download, snapshot_download
        from kernels._versions import _get_available_versions_from_cache
        out = {{
            "by_version": snapshot_download({REPO!r}, repo_type="kernel", revision="v1",
                                            allow_patterns=["build/*"]),
            "by_commit": snapshot_download({REPO!r}, repo_type="kernel", revision={commit!r},
                                           allow_patterns=["build/*"]),
            "files": {{f: hf_hub_download({REPO!r}, f, repo_type="kernel", revision="v1")
                      for f in {files!r}}},
            "versions": {{str(k): v.target_commit
                         for k, v in _get_available_versions_from_cache({REPO!r}).items()}},
        }}
        print(json.dumps(out))
    """, hub_env(CLOSED, cache, HF_HUB_OFFLINE=1)))
    assert hf["by_version"] == snapshot
    assert hf["by_commit"] == snapshot
    assert hf["versions"] == {"1": commit}
    for rel, path in hf["files"].items():
        assert path == os.path.join(snapshot, rel)
        assert open(path, "rb").read() == (folder / rel).read_bytes()


def test_kernels_offline_treats_our_cache_as_it_treats_huggingface_hubs(published, kernelhub_bin,
                                                                       tmp_path):
    """kernels' offline load snapshots the whole repository (no allow patterns) against the
    complete trees/<sha>.json that huggingface_hub 2.4 writes, so after a one-variant download
    it refuses with IncompleteSnapshotError -> FileNotFoundError, whoever filled the cache. Our
    cache must give the reference exactly the answer its own cache gives."""
    url, commit, _ = published
    ours_cache, theirs_cache = tmp_path / "ours", tmp_path / "theirs"
    result = ours(kernelhub_bin, ["download", REPO, "--version", "1"], hub_env(url, ours_cache))
    assert result["variant"] == VARIANT
    assert OTHER_VARIANT in result["variants"]
    run_python(f"""
        from huggingface_hub import snapshot_download
        snapshot_download({REPO!r}, repo_type="kernel", revision="v1",
                          allow_patterns=["build/{VARIANT}/*"])
    """, hub_env(url, theirs_cache))
    load = """
        import json
        import kernels
        try:
            module = kernels.get_kernel({repo!r}, version=1, trust_remote_code=True)
            print(json.dumps({{"loaded": module.relu(-3)}}))
        except Exception as error:
            print(json.dumps({{"error": type(error).__name__, "message": str(error)}}))
    """.format(repo=REPO)
    outcomes = [last_json(run_python(load, hub_env(CLOSED, cache, HF_HUB_OFFLINE=1)))
                for cache in (ours_cache, theirs_cache)]
    assert outcomes[0] == outcomes[1]
    assert commit in json.dumps(outcomes[0]) or "loaded" in outcomes[0]


def test_versions_lists_each_version_with_its_trace(published, kernelhub_bin, tmp_path):
    url, commit, _ = published
    cache = tmp_path / "hub"
    listed = ours(kernelhub_bin, ["versions", REPO], hub_env(url, cache))
    assert [v["version"] for v in listed["versions"]] == [1]
    assert listed["versions"][0]["commit"] == commit
    trace = {t["variant"]: t for t in listed["versions"][0]["trace"]}
    assert trace[VARIANT]["accepted"] and trace[VARIANT]["preferred"]
    assert not trace[OTHER_VARIANT]["accepted"]
    text = run([kernelhub_bin, "versions", REPO], env=hub_env(url, cache))
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Version 1:\n\n")
    assert f"{VARIANT} compatible, preferred" in text.stdout
