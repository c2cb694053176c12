# SPDX-License-Identifier: Apache-2.0
"""`kernelhub serve --mirror` (issue 23 §1, docs/mirror.md): an upstream `kernelhub serve`
stands in for huggingface.co with a kernel of several versions, a mirror stands in front of
it, and the reference `kernels`, huggingface_hub and our `kernelhub` (Python and CLI) load
through the mirror with the upstream's commit ids (a kernels.lock written against the upstream,
at a commit no branch points at any more, downloads through the mirror); loads go on while the upstream is down (the
answers say so); a version published upstream appears on the mirror after `refresh`; fifty
concurrent first downloads make one upstream fetch per file; a private upstream repository is
served only to the mirror's own token holders; mirrored repositories refuse writes."""
import concurrent.futures
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import VENV_BIN, HubServer, start_hub_server, stop_hub_server
from hub_cache_support import (VARIANT, ThrottlingProxy, hub_env, last_json, make_kernel,
                               publish, run_python)
from serve_helpers import commit, http

PYTHON = VENV_BIN / "python"
REPO = "trusted/relu"
TRUSTED = "[organizations.trusted]\ntrustedKernelPublisher = true\n"
# Every file of the variant a CPU machine picks, as a client downloads it.
VARIANT_FILES = [f"build/{VARIANT}/metadata.json", f"build/{VARIANT}/relu/__init__.py",
                 f"build/{VARIANT}/relu/big.bin"]
# Big enough to go through LFS (it is binary: os.urandom), small enough to be quick.
BIG = 256 * 1024

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")


def start_mirror(kernelhub_bin, folder: Path, upstream: str, refresh: int = 300,
                 upstream_token: str = "", cli: bool = False, name: str = "mirror") -> HubServer:
    """A `kernelhub serve` mirroring `upstream`: by `--mirror` (cli) or config.toml's [mirror];
    its own token file holds `kh-mirror-token`."""
    root = folder / name
    root.mkdir(parents=True)
    config = TRUSTED + "[mirror]\n"
    if not cli:
        config += f'upstream = "{upstream}"\n'
    config += f"refresh = {refresh}\n"
    if upstream_token:
        (root / "upstream.token").write_text(upstream_token + "\n")
        config += 'token-file = "upstream.token"\n'
    (root / "config.toml").write_text(config)
    tokens = folder / f"{name}-tokens"
    tokens.write_text("kh-mirror-token\n")
    args = [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
            str(tokens)] + (["--mirror", upstream] if cli else [])
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    assert url.startswith("http://"), process.stderr.read()
    return HubServer(url, "kh-mirror-token", root, process)


def publish_versions(upstream: HubServer, folder: Path, repo: str = REPO, versions=(1, 2)):
    """The test kernel at `repo`, one commit per version, each on its v<N> branch."""
    shas = {}
    for version in versions:
        kernel = make_kernel(folder / f"kernel-v{version}", big_bytes=BIG)
        (kernel / "README.md").write_text(f"# relu v{version}\n")
        shas[version] = publish(upstream.url, upstream.token, repo, kernel,
                                branches=(f"v{version}",))
    return shas


def refs(server: HubServer, repo: str = REPO, token=None) -> dict:
    status, _, body = http(server, "GET", f"/api/kernels/{repo}/refs", token=token)
    assert status == 200, body
    return {b["name"]: b["targetCommit"] for b in json.loads(body)["branches"]}


LOAD = """
    import json, {package}
    k = {package}.get_kernel({repo!r}, {selector}, backend="cpu")
    assert k.relu(-3) == 0 and k.relu(2) == 2
    print(json.dumps({{"name": k.__name__, "file": k.__file__}}))
"""


def load(server: HubServer, package: str, cache: Path, selector: str = "version=1",
         repo: str = REPO):
    env = hub_env(server.url, cache)
    env.pop("HF_HUB_DISABLE_TELEMETRY")  # kernels 0.17.2 then builds a user agent httpx refuses
    if os.environ.get("KERNELHUB_PYTHON_DIR"):
        env["PYTHONPATH"] = os.environ["KERNELHUB_PYTHON_DIR"]
    return run_python(LOAD.format(package=package, repo=repo, selector=selector), env, check=False)


@pytest.fixture
def upstream(kernelhub_bin, tmp_path):
    server = start_hub_server(kernelhub_bin, tmp_path, config=TRUSTED, name="upstream")
    yield server
    stop_hub_server(server)


def test_kernels_huggingface_hub_and_kernelhub_load_through_the_mirror(
        kernelhub_bin, upstream, tmp_path):
    shas = publish_versions(upstream, tmp_path)
    mirror = start_mirror(kernelhub_bin, tmp_path, upstream.url, cli=True)
    try:
        # The reference loader first: the mirror holds nothing yet.
        assert not (mirror.root / "kernels").exists()
        reference = load(mirror, "kernels", tmp_path / "ref-cache")
        assert reference.returncode == 0, reference.stderr
        ours = load(mirror, "kernelhub", tmp_path / "our-cache", selector="version=2")
        assert ours.returncode == 0, ours.stderr
        # The upstream's commit ids, branch for branch.
        assert refs(mirror) == refs(upstream)
        assert refs(mirror)["v1"] == shas[1] and refs(mirror)["v2"] == shas[2]
        # huggingface_hub at a commit id of the upstream: a lock written upstream stays valid.
        got = run_python(f"""
            import json
            from huggingface_hub import hf_hub_download
            path = hf_hub_download({REPO!r}, {VARIANT_FILES[2]!r}, repo_type="kernel",
                                   revision={shas[1]!r})
            print(json.dumps(open(path, "rb").read().hex()))
        """, hub_env(mirror.url, tmp_path / "hf-cache"))
        status, _, upstream_bytes = http(upstream, "GET",
                                         f"/kernels/{REPO}/resolve/{shas[1]}/{VARIANT_FILES[2]}")
        assert status == 200 and bytes.fromhex(last_json(got)) == upstream_bytes
        # Our CLI, into its own cache.
        cli = subprocess.run([str(kernelhub_bin), "download", REPO, "--revision", "v2", "--json"],
                             env={**os.environ, **hub_env(mirror.url, tmp_path / "cli-cache")},
                             capture_output=True, text=True, timeout=300)
        assert cli.returncode == 0, cli.stderr
        assert shas[2] in cli.stdout
    finally:
        stop_hub_server(mirror)
    # The operator sees what was fetched.
    log = mirror.process.stderr.read()
    assert f"mirror: fetched kernels {REPO} from {upstream.url}" in log, log
    assert "mirror: fetched LFS object " in log, log


def test_loads_go_on_while_the_upstream_is_down_and_say_so(kernelhub_bin, upstream, tmp_path):
    publish_versions(upstream, tmp_path, versions=(1,))
    mirror = start_mirror(kernelhub_bin, tmp_path, upstream.url, refresh=0)
    try:
        first = load(mirror, "kernels", tmp_path / "cache-1")
        assert first.returncode == 0, first.stderr
        status, headers, _ = http(mirror, "GET", f"/api/kernels/{REPO}/revision/v1")
        assert status == 200 and headers.get("X-Kernelhub-Mirror") is None
        stop_hub_server(upstream)
        # A fresh cache: every byte comes from the mirror, which cannot ask the upstream.
        again = load(mirror, "kernels", tmp_path / "cache-2")
        assert again.returncode == 0, again.stderr
        status, headers, _ = http(mirror, "GET", f"/api/kernels/{REPO}/revision/v1")
        assert status == 200
        assert headers["X-Kernelhub-Mirror"].startswith("stale; upstream error: ")
        assert upstream.url in headers["X-Kernelhub-Mirror"]
        # What it never had: a 503 naming the upstream and its error.
        status, headers, body = http(mirror, "GET", "/api/kernels/trusted/other")
        assert status == 503, body
        assert upstream.url in headers["X-Error-Message"]
        status, headers, _ = http(mirror, "GET", f"/api/kernels/{REPO}/revision/v9")
        assert status == 503 and "v9" in headers["X-Error-Message"]
    finally:
        stop_hub_server(mirror)


def test_a_version_published_upstream_appears_after_refresh(kernelhub_bin, upstream, tmp_path):
    publish_versions(upstream, tmp_path, versions=(1,))
    mirror = start_mirror(kernelhub_bin, tmp_path, upstream.url, refresh=1)
    try:
        assert set(refs(mirror)) == {"main", "v1"}
        shas = publish_versions(upstream, tmp_path / "later", versions=(3,))
        deadline = time.monotonic() + 60
        while "v3" not in refs(mirror):
            assert time.monotonic() < deadline, "v3 never reached the mirror"
            time.sleep(0.5)
        assert refs(mirror)["v3"] == shas[3]
        loaded = load(mirror, "kernels", tmp_path / "cache", selector="version=3")
        assert loaded.returncode == 0, loaded.stderr
    finally:
        stop_hub_server(mirror)


def test_fifty_concurrent_first_downloads_make_one_upstream_fetch_per_file(
        kernelhub_bin, upstream, tmp_path):
    publish_versions(upstream, tmp_path, versions=(1,))
    # Slow enough that the fifty requests arrive while the first fetch is still running.
    proxy = ThrottlingProxy(upstream.url, rate=256 * 1024)
    mirror = start_mirror(kernelhub_bin, tmp_path, proxy.url)
    try:
        def download(index: int):
            got = {}
            for path in VARIANT_FILES:
                opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                url = f"{mirror.url}/kernels/{REPO}/resolve/v1/{path}"
                with opener.open(url, timeout=300) as response:
                    got[path] = response.read()
            return got

        with concurrent.futures.ThreadPoolExecutor(50) as pool:
            results = list(pool.map(download, range(50)))
        assert all(result == results[0] for result in results)
        assert len(results[0][VARIANT_FILES[2]]) == BIG
        # One clone of the repository and one download of its LFS object upstream.
        assert proxy.gets("/info/refs") == 1
        posts = [p for m, p, _ in proxy.requests if m == "POST"]
        assert sum(p.endswith("/git-upload-pack") for p in posts) == 1, posts
        assert sum(p.endswith("/info/lfs/objects/batch") for p in posts) == 1, posts
        assert proxy.gets("/.kernelhub/lfs/") == 1
    finally:
        stop_hub_server(mirror)
        proxy.close()


def test_a_private_upstream_repository_is_served_to_the_mirrors_own_users_only(
        kernelhub_bin, upstream, tmp_path):
    status, _, body = http(upstream, "POST", "/api/repos/create", token=upstream.token,
                           body=json.dumps({"name": "relu", "organization": "trusted",
                                            "type": "kernel", "private": True}),
                           headers={"Content-Type": "application/json"})
    assert status == 200, body
    shas = publish_versions(upstream, tmp_path, versions=(1,))
    mirror = start_mirror(kernelhub_bin, tmp_path, upstream.url, upstream_token=upstream.token)
    try:
        resolve = f"/kernels/{REPO}/resolve/v1/{VARIANT_FILES[2]}"
        # Without a token of the mirror's own: as if it did not exist, and nothing fetched.
        assert http(mirror, "GET", f"/api/kernels/{REPO}")[0] == 404
        assert http(mirror, "GET", resolve)[0] == 404
        assert not (mirror.root / "kernels" / "trusted" / "relu.git").exists()
        # The upstream's token is not one of the mirror's.
        assert http(mirror, "GET", resolve, token=upstream.token)[0] == 404
        status, _, body = http(mirror, "GET", resolve, token=mirror.token)
        assert status == 200 and len(body) == BIG
        assert refs(mirror, token=mirror.token)["v1"] == shas[1]
        # Fetched now, and still private.
        assert http(mirror, "GET", f"/api/kernels/{REPO}")[0] == 404
        assert http(mirror, "GET", resolve)[0] == 404
        # Read-only: a write to the mirrored repository is refused, a repository of the
        # mirror's own takes it.
        files = {"README.md": b"# changed\n"}
        status, headers, _ = commit(mirror, f"kernels/{REPO}", "main", files)
        assert status == 403 and "read-only mirror" in headers["X-Error-Message"]
        status, _, body = http(mirror, "POST", "/api/repos/create", token=mirror.token,
                               body=json.dumps({"name": "own", "organization": "trusted",
                                                "type": "kernel"}),
                               headers={"Content-Type": "application/json"})
        assert status == 200, body
        assert commit(mirror, "kernels/trusted/own", "main", files)[0] == 200
    finally:
        stop_hub_server(mirror)


def test_a_lock_written_against_the_upstream_downloads_through_the_mirror(
        kernelhub_bin, upstream, tmp_path):
    publish_versions(upstream, tmp_path, versions=(1,))
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{REPO}" = 1\n')

    def cli(url, cache, *args):
        return subprocess.run([str(kernelhub_bin), *map(str, args)], capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL,
                              env={**os.environ, **hub_env(url, cache)})

    locked = cli(upstream.url, tmp_path / "lock-cache", "lock", project, "--json")
    assert locked.returncode == 0, locked.stderr
    commit_id = json.loads(locked.stdout)["entries"][0]["commit"]
    assert commit_id == refs(upstream)["v1"]
    # v1 moves on upstream: the locked commit is history now, no branch's tip.
    status, _, body = commit(upstream, f"kernels/{REPO}", "v1", {"README.md": b"# moved on\n"})
    assert status == 200, body
    assert refs(upstream)["v1"] != commit_id
    mirror = start_mirror(kernelhub_bin, tmp_path, upstream.url)
    try:
        got = cli(mirror.url, tmp_path / "mirror-cache", "download", project, "--json")
        assert got.returncode == 0, got.stderr
        assert commit_id in got.stdout
    finally:
        stop_hub_server(mirror)
