# SPDX-License-Identifier: Apache-2.0
"""Hub loads both ways (issue 6): examples/relu built by our builder and uploaded with
`kernel-builder upload` to `kernelhub serve` is loaded by the REFERENCE `kernels.get_kernel`
through HF_ENDPOINT and by ours, to the same module name and the same results; a repository
laid out as the reference's Hub repositories are (pushed as a plain commit, not by our
upload) loads with ours as with the reference; the two share one cache; a corrupted cached
blob is fetched again online and refused offline, never imported."""
import json
import os
import shutil
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from conftest import VENV_BIN, example_unique_id, run
from hub_cache_support import ThrottlingProxy, last_json, publish, run_python

PYTHON = VENV_BIN / "python"
TOKEN = "kh-loader-token"
# No machine is offline-reachable here: offline steps point HF_ENDPOINT at a closed port too,
# so any request would fail loudly.
DEAD_ENDPOINT = "http://127.0.0.1:9"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)


@pytest.fixture(scope="module")
def hub(kernelhub_bin, kernel_builder, built_example, tmp_path_factory):
    """A served hub (org `trusted` trusted, `someone` not) holding our relu build at
    trusted/relu and someone/relu (branch v1) and a reference-layout kernel at trusted/layout."""
    tmp = tmp_path_factory.mktemp("loader-hub")
    root = tmp / "root"
    root.mkdir()
    (root / "config.toml").write_text(
        '[organizations.trusted]\ntrustedKernelPublisher = true\n')
    (tmp / "tokens").write_text(TOKEN + "\n")
    server = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    assert url.startswith("http://"), server.stderr.read()

    # examples/relu built for cpu, shared with other files (conftest's built_example).
    example = built_example("relu", ["cpu"])
    assert example.result.returncode == 0, example.result.stderr
    kernel = example.kernel
    env = dict(os.environ, HF_ENDPOINT=url, HF_TOKEN=TOKEN, HF_HOME=str(tmp / "upload-home"),
               NO_PROXY="127.0.0.1,localhost")
    for repo in ("trusted/relu", "someone/relu"):
        run([kernel_builder, "upload", kernel, "--repo-id", repo, "--branch", "v1"], env=env,
            check=True)

    layout = tmp / "layout"
    variant = layout / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(
        {"id": "_layout_cpu_0a1b2c3", "name": "layout", "version": 1,
         "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text(
        "import torch\nfrom .ops import double\n__all__ = ['double']\n")
    (variant / "ops.py").write_text("def double(x):\n    return x * 2\n")
    publish(url, TOKEN, "trusted/layout", layout)

    yield {"url": url, "tmp": tmp}
    server.terminate()
    server.wait(timeout=10)


def env_for(hub, cache: Path, **extra) -> dict:
    # No HF_HUB_DISABLE_TELEMETRY: kernels 0.17.2 then builds a user agent httpx rejects.
    env = {"HF_ENDPOINT": hub["url"], "HF_HOME": str(cache.parent / "home"),
           "HF_HUB_CACHE": str(cache), "NO_PROXY": "127.0.0.1,localhost",
           "no_proxy": "127.0.0.1,localhost"}
    if os.environ.get("KERNELHUB_PYTHON_DIR"):
        env["PYTHONPATH"] = os.environ["KERNELHUB_PYTHON_DIR"]
    env.update({k: str(v) for k, v in extra.items()})
    return env


LOAD = """
    import json, torch, {package}
    k = {package}.get_kernel({repo!r}, version=1, backend="cpu")
    x = torch.randn(4096)
    {check}
    print(json.dumps({{"name": k.__name__, "file": k.__file__}}))
"""
RELU = 'assert torch.equal(k.relu(x), torch.relu(x))'
DOUBLE = 'assert torch.equal(k.double(x), x * 2)'


def load(hub, package, repo, cache, check=RELU, **extra):
    code = LOAD.format(package=package, repo=repo, check=check)
    return run_python(code, env_for(hub, cache, **extra), check=False)


def test_reference_and_ours_load_our_upload_to_the_same_module(hub, tmp_path):
    reference = load(hub, "kernels", "trusted/relu", tmp_path / "ref-cache")
    assert reference.returncode == 0, reference.stderr
    ours = load(hub, "kernelhub", "trusted/relu", tmp_path / "our-cache")
    assert ours.returncode == 0, ours.stderr
    assert last_json(ours)["name"] == last_json(reference)["name"]
    assert last_json(ours)["name"].endswith("_" + example_unique_id("relu"))


def test_ours_loads_a_reference_layout_repository_like_the_reference(hub, tmp_path):
    reference = load(hub, "kernels", "trusted/layout", tmp_path / "ref-cache", check=DOUBLE)
    assert reference.returncode == 0, reference.stderr
    ours = load(hub, "kernelhub", "trusted/layout", tmp_path / "our-cache", check=DOUBLE)
    assert ours.returncode == 0, ours.stderr
    assert last_json(ours)["name"] == last_json(reference)["name"] == "_layout_cpu_0a1b2c3"


def test_one_cache_shared_with_the_reference_and_offline_loads(hub, tmp_path):
    cache = tmp_path / "cache"
    fetched = load(hub, "kernels", "trusted/relu", cache)
    assert fetched.returncode == 0, fetched.stderr
    # The reference resolves version=1 to a commit without writing refs/v1, so offline the
    # commit is the way in: ours, with no reachable server, loads what the reference fetched.
    commit = next((cache / "kernels--trusted--relu" / "snapshots").iterdir()).name
    code = LOAD.format(package="kernelhub", repo="trusted/relu", check=RELU).replace(
        "version=1", f"revision={commit!r}")
    offline = run_python(code, env_for(hub, cache, HF_HUB_OFFLINE=1, HF_ENDPOINT=DEAD_ENDPOINT),
                         check=False)
    assert offline.returncode == 0, offline.stderr
    assert last_json(offline)["name"] == last_json(fetched)["name"]
    # Ours writes refs/v1 when it resolves a version, so version=1 works offline after ours
    # fetched once (the reference's own offline lookup reads the same refs/v<N> files).
    ours_cache = tmp_path / "ours"
    assert load(hub, "kernelhub", "trusted/relu", ours_cache).returncode == 0
    assert (ours_cache / "kernels--trusted--relu" / "refs" / "v1").read_text() == commit
    again = load(hub, "kernelhub", "trusted/relu", ours_cache, HF_HUB_OFFLINE=1,
                 HF_ENDPOINT=DEAD_ENDPOINT)
    assert again.returncode == 0, again.stderr
    # Offline with an empty cache: a clear error naming the repository.
    empty = load(hub, "kernelhub", "trusted/relu", tmp_path / "empty", HF_HUB_OFFLINE=1,
                 HF_ENDPOINT=DEAD_ENDPOINT)
    assert empty.returncode != 0
    assert "trusted/relu" in empty.stderr and "offline" in empty.stderr.lower(), empty.stderr


def so_blob(cache: Path) -> Path:
    link = next((cache / "kernels--trusted--relu" / "snapshots").rglob("*.so"))
    return link.resolve()


def test_a_corrupted_blob_is_fetched_again_online_and_refused_offline(hub, tmp_path):
    cache = tmp_path / "cache"
    assert load(hub, "kernelhub", "trusted/relu", cache).returncode == 0
    blob = so_blob(cache)
    good = blob.read_bytes()
    blob.write_bytes(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])

    refused = load(hub, "kernelhub", "trusted/relu", cache, HF_HUB_OFFLINE=1,
                   HF_ENDPOINT=DEAD_ENDPOINT)
    assert refused.returncode != 0
    assert "corrupted" in refused.stderr and blob.name in refused.stderr, refused.stderr

    repaired = load(hub, "kernelhub", "trusted/relu", cache)
    assert repaired.returncode == 0, repaired.stderr
    assert so_blob(cache).read_bytes() == good


def test_a_sealed_variant_is_checked_again_once_anything_in_it_changes(hub, tmp_path):
    """Issue 25: a load of a variant whose files have been still for two seconds seals it, and
    later loads skip the checks while every file stats the same (they neither read nor write
    the blob stamps); a byte flipped in the library afterwards, its mtime put back, breaks the
    seal and the load refuses the file as it does without a seal."""
    cache = tmp_path / "cache"
    offline = {"HF_HUB_OFFLINE": 1, "HF_ENDPOINT": DEAD_ENDPOINT}
    assert load(hub, "kernelhub", "trusted/relu", cache).returncode == 0
    assert not list((cache / ".kernelhub").glob("sealed/**/torch*")), "sealed while fresh"
    time.sleep(2.5)
    sealing = load(hub, "kernelhub", "trusted/relu", cache, **offline)
    assert sealing.returncode == 0, sealing.stderr
    seals = [p for p in (cache / ".kernelhub" / "sealed").rglob("*") if p.is_file()]
    assert len(seals) == 1 and seals[0].name.startswith("torch"), seals

    stamps = cache / ".kernelhub" / "verified"
    shutil.rmtree(stamps)
    sealed = load(hub, "kernelhub", "trusted/relu", cache, **offline)
    assert sealed.returncode == 0, sealed.stderr
    assert not stamps.exists(), "the checks ran under an intact seal"

    blob = so_blob(cache)
    before = blob.stat()
    good = blob.read_bytes()
    blob.write_bytes(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])
    os.utime(blob, ns=(before.st_atime_ns, before.st_mtime_ns))
    refused = load(hub, "kernelhub", "trusted/relu", cache, **offline)
    assert refused.returncode != 0
    assert "corrupted" in refused.stderr and blob.name in refused.stderr, refused.stderr


def test_untrusted_publisher_and_no_fitting_variant_fail_like_the_reference(hub, tmp_path):
    code = """
        import json, {package}
        out = []
        for kwargs in ({{"repo_id": "someone/relu", "version": 1, "backend": "cpu"}},
                       {{"repo_id": "trusted/relu", "version": 1, "backend": "cuda"}},
                       {{"repo_id": "trusted/relu", "version": 7, "backend": "cpu"}}):
            try:
                {package}.get_kernel(**kwargs)
                out.append(["loaded", ""])
            except Exception as e:
                out.append([type(e).__name__, str(e)])
        k = {package}.get_kernel("someone/relu", version=1, backend="cpu", trust_remote_code=True)
        out.append(["loaded", k.__name__])
        print(json.dumps(out))
    """
    results = {}
    for package in ("kernels", "kernelhub"):
        result = run_python(code.format(package=package),
                            env_for(hub, tmp_path / f"{package}-cache"), check=False)
        assert result.returncode == 0, result.stderr
        results[package] = last_json(result)
    ours, reference = results["kernelhub"], results["kernels"]
    assert [kind for kind, _ in ours] == [kind for kind, _ in reference]
    assert ours[0][0] == "ValueError" and "trusted" in ours[0][1]
    assert ours[1][0] == "FileNotFoundError" and "torch" in ours[1][1]  # the trace
    assert ours[2] == reference[2]  # "Version 7 not found, available versions: 1"
    assert ours[3] == reference[3]


DEVICE_QUESTIONS = """
    import json, torch, kernelhub
    asked = []
    def counting(name, real):
        def wrapper(*args, **kwargs):
            asked.append(name)
            return real(*args, **kwargs)
        return wrapper
    for name in ("is_available", "get_device_capability", "get_device_properties"):
        setattr(torch.cuda, name, counting(name, getattr(torch.cuda, name)))
    k = kernelhub.get_kernel("trusted/relu", version=1, {backend})
    x = torch.randn(64)
    assert torch.equal(k.relu(x), torch.relu(x))
    assert kernelhub.has_kernel("trusted/relu", version=1, {backend})
    print(json.dumps(asked))
"""


@pytest.mark.parametrize("backend", ["cpu", None])
def test_a_load_that_names_the_cpu_backend_never_asks_torch_for_a_device(hub, tmp_path,
                                                                          backend):
    # Whether torch's backend has a device, and the GPU's arch, decide only between variants
    # of torch's own backend; asking costs a first torch.cuda.is_available() (issue 25). A
    # load without a backend still asks (where torch is a CUDA or ROCm build).
    import torch

    code = DEVICE_QUESTIONS.format(backend=f"backend={backend!r}" if backend else "")
    result = run_python(code, env_for(hub, tmp_path / "cache"), check=False)
    assert result.returncode == 0, result.stderr
    asked = last_json(result)
    if backend == "cpu":
        assert asked == []
    elif torch.version.cuda or torch.version.hip:
        assert "is_available" in asked


def test_a_load_from_the_cache_alone_does_not_build_a_user_agent(hub, tmp_path):
    # No request is made offline, so the User-Agent text (which reads the interpreter's binary
    # for its libc version) is not made either (issue 25). Filled online first.
    cache = tmp_path / "cache"
    assert load(hub, "kernelhub", "trusted/relu", cache).returncode == 0
    code = """
        import json, torch, kernelhub
        from kernelhub import _hub
        def refuse(*args, **kwargs):
            raise AssertionError("a user agent was built for a load from the cache")
        _hub.user_agent_text = refuse
        k = kernelhub.get_kernel("trusted/relu", version=1, backend="cpu")
        x = torch.randn(64)
        assert torch.equal(k.relu(x), torch.relu(x))
        print(json.dumps(k.__name__))
    """
    result = run_python(code, env_for(hub, cache, HF_HUB_OFFLINE=1, HF_ENDPOINT=DEAD_ENDPOINT),
                        check=False)
    assert result.returncode == 0, result.stderr


SHARED_CONNECTIONS = """
    import json, os, sys, torch, kernelhub
    def load():
        # trust_remote_code: one request a load (the refs), so what a load needs from the pool
        # does not depend on whether the trust check's request overlapped it (CI once saw the
        # first load's requests one after the other, leaving one pooled connection, and a later
        # load's two side by side, which had to open a second one).
        k = kernelhub.get_kernel("trusted/relu", version=1, backend="cpu", trust_remote_code=True)
        x = torch.randn(64)
        assert torch.equal(k.relu(x), torch.relu(x))
    def connections():
        print("load", flush=True)
        return int(sys.stdin.readline())
    load()
    first = connections()
    load()
    second = connections()
    pid = os.fork()
    if pid == 0:
        load()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    child = connections()
    load()
    parent_again = connections()
    print(json.dumps({"first": first, "second": second, "child": child,
                      "parent_again": parent_again, "child_status": status}))
"""


def test_loads_in_one_process_share_connections_and_a_forked_child_makes_its_own(hub, tmp_path):
    # One pool of connections per process (issue 25): a second load in the process sends its
    # requests on the first load's connections, where each load used to open its own and close
    # them at its end. A forked child (a DataLoader worker) must not send on the sockets it
    # inherited, which its parent still uses: it connects afresh, and the parent's pool works on.
    proxy = ThrottlingProxy(hub["url"], rate=1 << 30)
    try:
        env = dict(os.environ, **env_for(hub, tmp_path / "cache", HF_ENDPOINT=proxy.url))
        child = subprocess.Popen([str(PYTHON), "-c", textwrap.dedent(SHARED_CONNECTIONS)],
                                 env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        while (line := child.stdout.readline()) == "load\n":
            child.stdin.write(f"{proxy.connections}\n")
            child.stdin.flush()
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        counts = json.loads(line)
    finally:
        proxy.close()
    assert counts["child_status"] == 0
    assert counts["first"] >= 1
    assert counts["second"] == counts["first"], "the second load opened connections"
    assert counts["child"] > counts["second"], "the forked child used its parent's sockets"
    assert counts["parent_again"] == counts["child"], "the parent lost its connections"
