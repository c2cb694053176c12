# SPDX-License-Identifier: Apache-2.0
"""kernels.lock: `kernelhub lock` against the REFERENCE `kernels lock` (.venv/bin/kernels) on one
`kernelhub serve` holding three small kernels (alpha's metadata depends on gamma, so both lock
gamma too): the files must be byte-identical. Then `kernelhub download PROJECT` fetches the
locked variants and checks them against the lock, and fails, naming the kernel, the variant and
both hashes, once a cached blob is overwritten; the reference `kernels download` reads the lock
we wrote. Publisher trust (issue 27): both lock tools, run on the same projects, refuse a
kernel whose organization is not a trusted kernel publisher (kernel-depends included) with the
same message, exit status and no file; `kernelhub download PROJECT` refuses it too, and both
of ours take --trust-repo/--trust-remote-code as consent. Finally the Python package loads a
locked kernel with the server stopped.

The kernels are tiny fake variants (a metadata.json and a Python file), so nothing is built.
"""
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import VENV_BIN, HubServer, run
from hub_cache_support import OTHER_VARIANT, VARIANT, cache_files, publish

ORG = "locks-org"
SHADY = "locks-shady"  # an organization the hub's config.toml says is not a trusted publisher
KERNELS_CLI = VENV_BIN / "kernels"
PYTHON = VENV_BIN / "python"


def metadata(name: str, depends=()) -> str:
    return json.dumps({"name": name, "id": f"_{name}_locks_test", "version": 1,
                       "license": "apache-2.0", "python-depends": [],
                       "kernel-depends": [{"repo-id": d, "version": 1} for d in depends],
                       "backend": {"type": "cpu"}})


def make_fake_kernel(folder: Path, name: str, depends=()) -> Path:
    files = {
        f"build/{VARIANT}/metadata.json": metadata(name, depends),
        f"build/{VARIANT}/{name}/__init__.py": f"def which():\n    return {name!r}\n",
        f"build/{VARIANT}/{name}/data.txt": f"{name} data\n",
        f"build/{OTHER_VARIANT}/metadata.json": metadata(name, depends),
        f"build/{OTHER_VARIANT}/{name}/__init__.py": "raise ImportError\n",
    }
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


@pytest.fixture(scope="module")
def hub(kernelhub_bin, tmp_path_factory):
    """A server with a trusted org (the reference's lock checks publisher trust) and three
    kernels, each with a v1 branch; alpha also gets a v2 so v1 is not simply the newest. An
    untrusted org holds `odd`, which the trusted org's `needsodd` depends on."""
    base = tmp_path_factory.mktemp("locks")
    root = base / "root"
    root.mkdir()
    (root / "config.toml").write_text(f"[organizations.{ORG}]\ntrustedKernelPublisher = true\n\n"
                                      f"[organizations.{SHADY}]\ntrustedKernelPublisher = false\n")
    token = "kh-locks-token"
    (base / "tokens").write_text(token + "\n")
    process = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(base / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        pytest.fail(f"kernelhub serve did not start: {process.stderr.read()}")
    server = HubServer(url, token, root, process)
    server.commits = {}
    for org, name, depends in ((ORG, "gamma", ()), (ORG, "beta", ()), (ORG, "alpha", (f"{ORG}/gamma",)),
                               (SHADY, "odd", ()), (ORG, "needsodd", (f"{SHADY}/odd",))):
        folder = make_fake_kernel(base / f"src-{name}", name, depends)
        server.commits[name] = publish(url, token, f"{org}/{name}", folder)
    server.base = base
    yield server
    if process.poll() is None:
        process.terminate()
        process.wait(timeout=10)


def env_for(server, cache: Path) -> dict:
    """The reference `kernels` must not see HF_HUB_DISABLE_TELEMETRY (its user agent then ends
    in "; ", which httpx refuses), so this env leaves it out for both tools."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_DISABLE_TELEMETRY", "HF_HUB_OFFLINE", "HF_TOKEN", "KERNELS_CACHE")}
    env.update({"HF_ENDPOINT": server.url, "HF_HOME": str(cache.parent / "hf-home"),
                "HF_HUB_CACHE": str(cache), "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost"})
    return env


def project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    # Not sorted on purpose: the dependency format sorts, the legacy one keeps this order.
    (folder / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [project]
        name = "locked-app"
        version = "0.1.0"

        [build-system]
        requires = ["kernels", "setuptools"]

        [tool.kernels.dependencies]
        "{ORG}/beta" = 1
        "{ORG}/alpha" = 1
    """))
    return folder


def run_env(args, env, cwd=None):
    return subprocess.run([str(a) for a in args], env=env, cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=600)


@pytest.fixture(scope="module")
def locked(hub, kernelhub_bin):
    """The same project locked by the reference and by us, each with its own cache."""
    ref_dir = project(hub.base / "project-ref")
    ours_dir = project(hub.base / "project-ours")
    ref = run_env([KERNELS_CLI, "lock", ref_dir], env_for(hub, hub.base / "cache-ref"))
    assert ref.returncode == 0, ref.stderr
    ours = run_env([kernelhub_bin, "lock", ours_dir, "--json"], env_for(hub, hub.base / "cache-ours"))
    assert ours.returncode == 0, ours.stderr
    return ref_dir, ours_dir, json.loads(ours.stdout)


@pytest.mark.skipif(not KERNELS_CLI.exists(), reason="needs the reference kernels CLI in .venv")
def test_lock_is_byte_identical_to_the_reference(locked, hub):
    ref_dir, ours_dir, report = locked
    reference = (ref_dir / "kernels.lock").read_bytes()
    assert (ours_dir / "kernels.lock").read_bytes() == reference
    entries = json.loads(reference)
    # gamma is locked because alpha's metadata depends on it.
    assert [e["dependency"]["repo-id"] for e in entries] == [f"{ORG}/alpha", f"{ORG}/beta", f"{ORG}/gamma"]
    assert {e["repo_id"]: e["commit"] for e in report["entries"]} == {
        f"{ORG}/{name}": hub.commits[name] for name in ("alpha", "beta", "gamma")}


def test_lock_without_dependency_table_names_the_file(kernelhub_bin, hub, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    result = run_env([kernelhub_bin, "lock", tmp_path], env_for(hub, tmp_path / "cache"))
    assert result.returncode == 1
    assert "pyproject.toml: no [tool.kernels.dependencies] table" in result.stderr
    assert not (tmp_path / "kernels.lock").exists()


def blob_of(cache: Path, repo: str, rel: str) -> Path:
    """The blob a snapshot file links to."""
    folder = cache / f"kernels--{repo.replace('/', '--')}"
    (snapshot,) = (folder / "snapshots").iterdir()
    return (snapshot / rel).resolve()


def test_download_project_verifies_and_catches_a_tampered_blob(kernelhub_bin, hub, tmp_path):
    proj = project(tmp_path / "proj")
    cache = tmp_path / "cache"
    env = env_for(hub, cache)
    legacy = run_env([kernelhub_bin, "lock", proj, "--legacy"], env)
    assert legacy.returncode == 0, legacy.stderr
    lock = json.loads((proj / "kernels.lock").read_text())
    # pyproject order, each kernel after the kernels it depends on (gamma before alpha).
    assert [e["repo_id"] for e in lock] == [f"{ORG}/beta", f"{ORG}/gamma", f"{ORG}/alpha"]
    assert set(lock[2]["variants"]) == {VARIANT, OTHER_VARIANT}

    first = run_env([kernelhub_bin, "download", proj, "--json", "--all-variants"], env)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["ok"] is True
    checked = {k["repo_id"]: k["variants"] for k in report["kernels"]}
    assert sorted(v["variant"] for v in checked[f"{ORG}/alpha"]) == sorted([VARIANT, OTHER_VARIANT])
    assert {v["expected_from"] for v in checked[f"{ORG}/alpha"]} == {"kernels.lock"}
    assert all(v["actual"] == v["expected"] for v in checked[f"{ORG}/alpha"])
    assert f"Downloading kernel: {ORG}/alpha (revision: {hub.commits['alpha']})" in first.stderr

    # Offline, with no server to reach, the cache alone answers and verifies (trees/<commit>.json).
    offline = dict(env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    cached = run_env([kernelhub_bin, "download", proj, "--json"], offline)
    assert cached.returncode == 0, cached.stderr
    assert json.loads(cached.stdout)["ok"] is True

    blob = blob_of(cache, f"{ORG}/alpha", f"build/{VARIANT}/alpha/data.txt")
    blob.chmod(0o644)
    blob.write_text("tampered\n")
    second = run_env([kernelhub_bin, "download", proj], env)
    assert second.returncode == 1
    expected_hash = lock[2]["variants"][VARIANT]["hash"]
    assert f"`{ORG}/alpha` variant {VARIANT}" in second.stderr
    assert expected_hash in second.stderr
    assert f"changed: build/{VARIANT}/alpha/data.txt" in second.stderr
    assert run_env([kernelhub_bin, "download", proj], offline).returncode == 1
    # The other kernels still verify.
    assert f"`{ORG}/beta`" not in second.stderr.replace(f"Downloading kernel: {ORG}/beta", "")


def test_legacy_hashes_match_the_listing_huggingface_hub_returns(kernelhub_bin, hub, tmp_path):
    """The git_lfs_concat hash recomputed in Python from huggingface_hub's own recursive tree
    listing, as the older kernels computed it (sorted (path bytes, hash) pairs into SHA-256)."""
    proj = project(tmp_path / "proj")
    env = env_for(hub, tmp_path / "cache")
    result = run_env([kernelhub_bin, "lock", proj, "--legacy"], env)
    assert result.returncode == 0, result.stderr
    ours = {e["repo_id"]: e for e in json.loads((proj / "kernels.lock").read_text())}
    script = textwrap.dedent(f"""
        import hashlib, json
        from huggingface_hub import HfApi
        from huggingface_hub.hf_api import RepoFile
        api = HfApi()
        out = {{}}
        for repo in {sorted(ours)!r}:
            sha = api.repo_info(repo, repo_type="kernel", revision="v1").sha
            pairs = {{}}
            for item in api.list_repo_tree(repo, repo_type="kernel", revision=sha, recursive=True):
                if not isinstance(item, RepoFile) or not item.path.startswith("build/torch"):
                    continue
                parts = item.path.split("/")
                if item.path.endswith(".pyc") or "__pycache__" in parts:
                    continue
                digest = item.lfs.sha256 if item.lfs else item.blob_id
                pairs.setdefault(parts[1], []).append(("/".join(parts[2:]).encode(), digest))
            hashes = {{}}
            for variant, files in pairs.items():
                m = hashlib.sha256()
                for path, digest in sorted(files):
                    m.update(path)
                    m.update(bytes.fromhex(digest))
                hashes[variant] = "sha256-" + m.hexdigest()
            out[repo] = {{"sha": sha, "hashes": hashes}}
        print(json.dumps(out))
    """)
    listed = subprocess.run([str(PYTHON), "-c", script], env=env, capture_output=True,
                            text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    expected = json.loads(listed.stdout.strip().splitlines()[-1])
    for repo, entry in ours.items():
        assert entry["sha"] == expected[repo]["sha"]
        assert {v: lock["hash"] for v, lock in entry["variants"].items()} == expected[repo]["hashes"]
        assert {lock["hash_type"] for lock in entry["variants"].values()} == {"git_lfs_concat"}


def test_download_project_without_lock_fails(kernelhub_bin, hub, tmp_path):
    result = run_env([kernelhub_bin, "download", tmp_path], env_for(hub, tmp_path / "cache"))
    assert result.returncode == 1
    assert f"no kernels.lock file found in: {tmp_path}" in result.stderr


@pytest.mark.skipif(not KERNELS_CLI.exists(), reason="needs the reference kernels CLI in .venv")
def test_reference_download_reads_our_lock(locked, hub, kernelhub_bin, tmp_path):
    _, ours_dir, _ = locked
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(ours_dir / "kernels.lock", proj / "kernels.lock")
    ref = run_env([KERNELS_CLI, "download", proj], env_for(hub, tmp_path / "cache-ref"))
    assert ref.returncode == 0, ref.stderr
    ours = run_env([kernelhub_bin, "download", proj], env_for(hub, tmp_path / "cache-ours"))
    assert ours.returncode == 0, ours.stderr
    progress = lambda text: [l for l in text.splitlines() if l.startswith("Downloading kernel:")]
    assert progress(ours.stderr) == progress(ref.stderr)


# Publisher trust (issue 27). The reference checks each kernel's publisher in lock_kernel_tree
# before fetching anything of it, with trust_remote_code=False and no way to consent.

def trust_project(folder: Path, *repos: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    dependencies = "".join(f'"{repo}" = 1\n' for repo in repos)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "trust-app"\nversion = "0.1.0"\n\n[build-system]\n'
        f'requires = ["kernels"]\n\n[tool.kernels.dependencies]\n{dependencies}')
    return folder


def not_trusted(repo: str) -> str:
    return (f"Kernel repository '{repo}' is not from a trusted publisher. Set trust_remote_code=True "
            "or add the repository ID to the trust_remote_code allowlist to allow loading kernels "
            "from untrusted sources.")


def cached_repos(cache: Path) -> set:
    return {p.name for p in cache.glob("kernels--*")} if cache.exists() else set()


# name -> (the project's kernels, what the refusal says: None when both lock it)
TRUST_CASES = {
    "trusted-publisher": ([f"{ORG}/beta"], None),
    "untrusted-publisher": ([f"{SHADY}/odd"], not_trusted(f"{SHADY}/odd")),
    "untrusted-kernel-depends": ([f"{ORG}/needsodd"], not_trusted(f"{SHADY}/odd")),
    "unknown-publisher": ([f"{ORG}/beta", "locks-nobody/ghost"],
                          "Kernel repository 'locks-nobody/ghost' could not verify publisher trust status."),
}


@pytest.mark.skipif(not KERNELS_CLI.exists(), reason="needs the reference kernels CLI in .venv")
@pytest.mark.parametrize("case", sorted(TRUST_CASES))
def test_lock_checks_publisher_trust_as_the_reference(case, hub, kernelhub_bin, tmp_path):
    repos, refusal = TRUST_CASES[case]
    ref_dir = trust_project(tmp_path / "ref", *repos)
    ours_dir = trust_project(tmp_path / "ours", *repos)
    ref = run_env([KERNELS_CLI, "lock", ref_dir], env_for(hub, tmp_path / "cache-ref"))
    ours = run_env([kernelhub_bin, "lock", ours_dir], env_for(hub, tmp_path / "cache-ours"))
    assert (ours.returncode, ref.returncode) == ((0, 0) if refusal is None else (1, 1)), (
        ours.stderr, ref.stderr)
    if refusal is None:
        assert (ours_dir / "kernels.lock").read_bytes() == (ref_dir / "kernels.lock").read_bytes()
        return
    # The reference's CLI ends with the ValueError's traceback; ours says the same text.
    last = ref.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: ") and refusal in last, ref.stderr
    assert f"kernelhub: error: {last[len('ValueError: '):]}" in ours.stderr, ours.stderr
    assert "--trust-repo" in ours.stderr
    assert not (ref_dir / "kernels.lock").exists() and not (ours_dir / "kernels.lock").exists()
    # Refused before anything of the untrusted kernel was fetched.
    assert "kernels--locks-shady--odd" not in cached_repos(tmp_path / "cache-ours")


def test_lock_takes_consent_for_an_untrusted_publisher(hub, kernelhub_bin, tmp_path):
    proj = trust_project(tmp_path / "proj", f"{ORG}/needsodd")
    env = env_for(hub, tmp_path / "cache")
    other = run_env([kernelhub_bin, "lock", proj, "--trust-repo", f"{SHADY}/other"], env)
    assert other.returncode == 1 and not_trusted(f"{SHADY}/odd") in other.stderr
    allowed = run_env([kernelhub_bin, "lock", proj, "--trust-repo", f"{SHADY}/odd", "--json"], env)
    assert allowed.returncode == 0, allowed.stderr
    assert {e["repo_id"]: e["commit"] for e in json.loads(allowed.stdout)["entries"]} == {
        f"{ORG}/needsodd": hub.commits["needsodd"], f"{SHADY}/odd": hub.commits["odd"]}
    allowlisted = (proj / "kernels.lock").read_bytes()
    everyone = run_env([kernelhub_bin, "lock", proj, "--trust-remote-code"], env)
    assert everyone.returncode == 0, everyone.stderr
    assert (proj / "kernels.lock").read_bytes() == allowlisted

    # Offline no overview can be read: as the reference's lock (which makes requests even
    # offline, and fails), refused, even for the trusted org, without consent.
    (proj / "kernels.lock").unlink()
    offline = dict(env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    refused = run_env([kernelhub_bin, "lock", proj], offline)
    assert refused.returncode == 1
    assert f"Kernel repository '{ORG}/needsodd' could not verify publisher trust status." in refused.stderr
    assert not (proj / "kernels.lock").exists()


def test_download_project_checks_publisher_trust(hub, kernelhub_bin, tmp_path):
    proj = trust_project(tmp_path / "proj", f"{ORG}/needsodd")
    cache = tmp_path / "cache"
    env = env_for(hub, cache)
    locked = run_env([kernelhub_bin, "lock", proj, "--trust-repo", f"{SHADY}/odd"], env)
    assert locked.returncode == 0, locked.stderr
    odd = lambda: {k: v for k, v in cache_files(cache).items() if "locks-shady" in k}  # noqa: E731
    before = odd()  # what locking fetched: odd's metadata.json files

    refused = run_env([kernelhub_bin, "download", proj, "--json"], env)
    assert refused.returncode == 1
    errors = {k["repo_id"]: k["error"] for k in json.loads(refused.stdout)["kernels"]}
    assert errors[f"{ORG}/needsodd"] is None
    assert errors[f"{SHADY}/odd"].startswith(not_trusted(f"{SHADY}/odd")), errors
    assert f"error: {not_trusted(f'{SHADY}/odd')}" in refused.stderr, refused.stderr
    assert odd() == before, "the refused kernel was downloaded"

    allowed = run_env([kernelhub_bin, "download", proj, "--trust-repo", f"{SHADY}/odd"], env)
    assert allowed.returncode == 0, allowed.stderr
    # Offline, as get_kernel: the check is skipped with its warning and the cache answers.
    offline = dict(env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    cached = run_env([kernelhub_bin, "download", proj], offline)
    assert cached.returncode == 0, cached.stderr
    assert (f"Skipping publisher trust check for '{SHADY}/odd' because Hugging Face Hub is in "
            "offline mode.") in cached.stderr
    # One repository's download checks no publisher, so consent there is a mistake, said so.
    single = run_env([kernelhub_bin, "download", f"{SHADY}/odd", "--version", "1",
                      "--trust-remote-code"], env)
    assert single.returncode == 1
    assert "--trust-remote-code and --trust-repo apply to a project's locked kernels" in single.stderr


# The Python package: a locked kernel loads from the cache alone. These run last in this file:
# they stop the module's server so that any request would fail.

def python(script: str, env: dict):
    """Runs `script` in the venv's Python with our package (KERNELHUB_PYTHON_DIR first)."""
    env = dict(env)
    extra = [os.environ.get("KERNELHUB_PYTHON_DIR", "")] + env.pop("EXTRA_PATH", [])
    env["PYTHONPATH"] = os.pathsep.join(p for p in extra + [env.get("PYTHONPATH", "")] if p)
    return subprocess.run([str(PYTHON), "-c", textwrap.dedent(script)], env=env,
                          capture_output=True, text=True, timeout=300)


def require_hub_loads(result):
    if "No module named 'kernelhub'" in result.stderr:
        pytest.skip("the kernelhub Python package is not importable: install it or set "
                    "KERNELHUB_PYTHON_DIR=<build>/python")
    if "NotImplementedError" in result.stderr:
        pytest.skip("kernelhub's Python Hub loads are not implemented in this build yet")


@pytest.fixture(scope="module")
def offline_project(hub, kernelhub_bin, locked):
    """A project locked (current format) and downloaded by `kernelhub download`, then the
    server stopped."""
    _, ours_dir, _ = locked
    cache = hub.base / "cache-python"
    env = env_for(hub, cache)
    result = run_env([kernelhub_bin, "download", ours_dir], env)
    assert result.returncode == 0, result.stderr
    hub.process.terminate()
    hub.process.wait(timeout=10)
    return ours_dir, env


def test_python_load_kernel_uses_only_the_cache(offline_project):
    proj, env = offline_project
    result = python(f"""
        import json
        from pathlib import Path
        import kernelhub
        kernel = kernelhub.load_kernel("{ORG}/alpha", lockfile=Path({str(proj / 'kernels.lock')!r}),
                                       backend="cpu")
        print(json.dumps([kernel.which(), kernel.__name__]))
    """, env)
    require_hub_loads(result)
    assert result.returncode == 0, result.stderr
    which, name = json.loads(result.stdout.strip().splitlines()[-1])
    assert which == "alpha"
    assert name.startswith("_alpha_locks_test")


def test_python_get_locked_kernel_reads_the_callers_distribution(offline_project, tmp_path):
    proj, env = offline_project
    site = tmp_path / "site"
    dist = site / "locked_app-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: locked-app\nVersion: 0.1.0\n")
    (dist / "top_level.txt").write_text("locked_app\n")
    shutil.copy(proj / "kernels.lock", dist / "kernels.lock")
    package = site / "locked_app"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(f"""\
        import kernelhub

        def load():
            return kernelhub.get_locked_kernel("{ORG}/beta", lockfile=None)
    """))
    result = python("""
        import json
        import locked_app
        print(json.dumps(locked_app.load().which()))
    """, dict(env, HF_HUB_OFFLINE="1", EXTRA_PATH=[str(site)]))
    require_hub_loads(result)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == "beta"
