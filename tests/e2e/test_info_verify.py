# SPDX-License-Identifier: Apache-2.0
"""`kernelhub info`, `kernelhub versions` and `kernelhub verify` against the reference.

info and versions are compared byte for byte with the reference CLI (`.venv/bin/kernels info`,
`kernels versions`) on a local build of examples/relu and on the same kernel published to one
`kernelhub serve`. Offline (HF_HUB_OFFLINE=1) ours answers from the cache through a logging
proxy that must see no request at all, where the reference still lists the Hub tree.

verify's verdicts are compared with the digest step of the reference's `verify_variant`
(kernels_data's Metadata, Digest.hash_variant and Digest.validate, called directly: the
sigstore step needs a signature no local build has) on a good variant and on copies with one
byte changed, an extra file and a missing file, locally and in the Hub cache.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import VENV_BIN, copy_built, venv_torch
from hub_cache_support import ThrottlingProxy, publish

PYTHON = VENV_BIN / "python"
KERNELS = VENV_BIN / "kernels"
REPO = "m3-org/relu"
# A variant no test machine loads, so the traces (and the variant verified) are deterministic.
FOREIGN = "torch29-cxx11-cu128-aarch64-linux"

pytestmark = pytest.mark.skipif(
    not KERNELS.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with the reference kernels, cmake and ninja",
)


def env_for(url=None, cache=None, offline=False):
    """A clean Hub environment. HF_HUB_DISABLE_TELEMETRY stays unset: with it kernels 0.17.2
    builds a user agent ending in "; ", which httpx refuses."""
    env = dict(os.environ)
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE",
                 "KERNELS_CACHE", "HF_HUB_DISABLE_TELEMETRY", "HF_ENDPOINT"):
        env.pop(name, None)
    # Ours probes torch with KERNELHUB_PYTHON (else the python3 on PATH): the venv's, which
    # is the interpreter the reference CLI runs in.
    env.update({"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                "KERNELHUB_PYTHON": str(PYTHON)})
    if url:
        env["HF_ENDPOINT"] = url
    if cache:
        env["HF_HUB_CACHE"] = str(cache)
        env["HF_HOME"] = str(Path(cache).parent / "hf-home")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def sh(args, env=None):
    return subprocess.run([str(a) for a in args], env=env or env_for(), capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=600)


def variants_of(kernel: Path) -> list:
    """The variant folders of a built kernel (build/ also holds the builder's hidden state)."""
    return [p for p in (kernel / "build").iterdir() if p.is_dir() and not p.name.startswith(".")]


@pytest.fixture(scope="module")
def built(built_example):
    """examples/relu built for cpu once per session (conftest's built_example, shared: never
    changed here), its digest in metadata.json."""
    example = built_example("relu", ["cpu"])
    assert example.result.returncode == 0, example.result.stderr
    dest = example.kernel
    [variant] = variants_of(dest)
    assert "digest" in json.loads((variant / "metadata.json").read_text())
    return dest


class Server:
    def __init__(self, url, token, process):
        self.url, self.token, self.process = url, token, process


@pytest.fixture(scope="module")
def server(kernelhub_bin, tmp_path_factory):
    """One `kernelhub serve` for the module (the shared hub_server fixture is per test)."""
    root = tmp_path_factory.mktemp("serve")
    (root / "tokens").write_text("m3-token\n")
    process = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root / "hub"), "--port", "0",
         "--token-file", str(root / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        pytest.fail(f"kernelhub serve did not start: {process.stderr.read()}")
    yield Server(url, "m3-token", process)
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def published(server, built, tmp_path_factory):
    """v1: the cpu build; v2: the same plus a foreign-arch copy (same kernel-wide metadata,
    so whichever variant the reference reads first, the fields agree)."""
    folder = tmp_path_factory.mktemp("publish")
    [variant] = variants_of(built)
    shutil.copytree(variant, folder / "build" / variant.name,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (folder / "README.md").write_text("# relu\n")
    v1 = publish(server.url, server.token, REPO, folder, branches=("v1",))
    shutil.copytree(folder / "build" / variant.name, folder / "build" / FOREIGN)
    v2 = publish(server.url, server.token, REPO, folder, branches=("v2",))
    return {"v1": v1, "v2": v2, "variant": variant.name}


# ---------------------------------------------------------------------------------------- info


@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_info_on_a_local_build_matches_reference(kernelhub_bin, built, flags):
    ours = sh([kernelhub_bin, "info", built, *flags])
    theirs = sh([KERNELS, "info", built, *flags])
    assert ours.returncode == 0 == theirs.returncode, ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout


def test_info_spells_a_relative_local_path_as_the_reference(kernelhub_bin, built):
    for spelling in ("./relu/", "relu//build/..", "relu"):
        ours = subprocess.run([str(kernelhub_bin), "info", spelling, "--json"], cwd=built.parent,
                              env=env_for(), capture_output=True, text=True, timeout=60)
        theirs = subprocess.run([str(KERNELS), "info", spelling, "--json"], cwd=built.parent,
                                env=env_for(), capture_output=True, text=True, timeout=60)
        assert ours.returncode == 0 == theirs.returncode, ours.stderr + theirs.stderr
        assert ours.stdout == theirs.stdout


def test_info_refuses_a_version_with_a_local_path(kernelhub_bin, built):
    for program in (kernelhub_bin, KERNELS):
        result = sh([program, "info", built, "--version", "1"])
        assert result.returncode == 1
        assert "--revision and --version cannot be used with a local path" in result.stderr


@pytest.mark.parametrize("flags", [[], ["--json"], ["--version", "1"], ["--json", "--version", "2"],
                                   ["--revision", "main"], ["--revision", "v1", "--json"]])
def test_info_on_the_hub_matches_reference(kernelhub_bin, published, server, tmp_path, flags):
    ours = sh([kernelhub_bin, "info", REPO, *flags], env_for(server.url, tmp_path / "ours"))
    theirs = sh([KERNELS, "info", REPO, *flags], env_for(server.url, tmp_path / "theirs"))
    assert ours.returncode == 0 == theirs.returncode, ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout


def test_info_offline_answers_from_the_cache_without_a_request(kernelhub_bin, published, server,
                                                               tmp_path):
    cache = tmp_path / "hub"
    online = sh([kernelhub_bin, "info", REPO, "--json"], env_for(server.url, cache))
    assert online.returncode == 0, online.stderr
    proxy = ThrottlingProxy(server.url, rate=10**9)
    try:
        offline = sh([kernelhub_bin, "info", REPO, "--json"], env_for(proxy.url, cache, offline=True))
        assert offline.returncode == 0, offline.stderr
        assert offline.stdout == online.stdout
        by_version = sh([kernelhub_bin, "info", REPO, "--version", "2"],
                        env_for(proxy.url, cache, offline=True))
        assert by_version.returncode == 0, by_version.stderr
        assert "Revision: v2\n" in by_version.stdout
        # The reference resolves the version from refs/ but still lists the Hub tree.
        theirs = sh([KERNELS, "info", REPO, "--json"], env_for(proxy.url, cache, offline=True))
        assert theirs.returncode != 0
        assert "OfflineModeIsEnabled" in theirs.stderr and "/tree/v2/build" in theirs.stderr
        assert proxy.requests == []
    finally:
        proxy.close()


def test_info_offline_miss_names_repository_revision_and_cache(kernelhub_bin, tmp_path):
    cache = tmp_path / "empty"
    result = sh([kernelhub_bin, "info", REPO, "--revision", "main"],
                env_for("http://127.0.0.1:9", cache, offline=True))
    assert result.returncode == 1
    assert REPO in result.stderr and "main" in result.stderr and str(cache) in result.stderr


# ------------------------------------------------------------------------------------ versions


def gpu_backend_without_device():
    """Whether the venv's torch is a GPU build with no device in this process (a CUDA torch on
    a machine without a GPU), where kernelhub deliberately prefers a cpu variant."""
    torch = venv_torch()
    return bool(torch["cuda"]) and not torch["cuda_available"]


def with_cpu_preferred(reference_listing):
    """The reference's `versions` listing as kernelhub prints it when the selected GPU backend
    has no device (docs/moving-from-kernels.md, issue 22 §4): a cpu variant it refused for
    the backend is compatible and preferred, and listed first in its version."""
    blocks, block = [], []
    for line in reference_listing.splitlines():
        if line.startswith("Version "):
            blocks.append(block)
            block = [line]
        else:
            block.append(line)
    blocks.append(block)
    out = []
    for block in blocks:
        refused = [line for line in block
                   if re.fullmatch(r"\S+-cpu-\S+: backend \(cpu\) does not match selected "
                                   r"backend \(\S+\)", line)]
        rest = [line for line in block if line not in refused]
        preferred = [line.split(":")[0] + " compatible, preferred \u2705" for line in refused]
        out += rest[:2] + preferred + rest[2:] if rest and rest[0].startswith("Version ") \
            else rest
    return "\n".join(out) + ("\n" if reference_listing.endswith("\n") else "")


def test_versions_online_matches_reference(kernelhub_bin, published, server, tmp_path):
    ours = sh([kernelhub_bin, "versions", REPO], env_for(server.url, tmp_path / "ours"))
    theirs = sh([KERNELS, "versions", REPO], env_for(server.url, tmp_path / "theirs"))
    assert ours.returncode == 0 == theirs.returncode, ours.stderr + theirs.stderr
    expected = theirs.stdout
    if gpu_backend_without_device():
        expected = with_cpu_preferred(expected)
        assert expected != theirs.stdout, "the fixture has no cpu variant the reference refuses"
    assert ours.stdout == expected
    assert "Version 1:" in ours.stdout and "Version 2:" in ours.stdout


def test_versions_offline_lists_cached_versions_without_a_request(kernelhub_bin, published, server,
                                                                  tmp_path):
    cache = tmp_path / "hub"
    # v1 downloaded whole; of v2 only what `info` reads (refs/v2, its tree, one metadata.json).
    done = sh([kernelhub_bin, "download", REPO, "--version", "1", "--all-variants"],
              env_for(server.url, cache))
    assert done.returncode == 0, done.stderr
    done = sh([kernelhub_bin, "info", REPO, "--version", "2"], env_for(server.url, cache))
    assert done.returncode == 0, done.stderr
    online = sh([kernelhub_bin, "versions", REPO], env_for(server.url, cache))
    assert online.returncode == 0, online.stderr
    proxy = ThrottlingProxy(server.url, rate=10**9)
    try:
        offline = sh([kernelhub_bin, "versions", REPO], env_for(proxy.url, cache, offline=True))
        assert offline.returncode == 0, offline.stderr
        # Every variant of each version, the never-downloaded foreign one included, comes
        # from the cached trees/<sha>.json.
        assert offline.stdout == online.stdout
        assert FOREIGN in offline.stdout
        # The reference reads refs/v<N> offline but then lists each version's Hub tree.
        theirs = sh([KERNELS, "versions", REPO], env_for(proxy.url, cache, offline=True))
        assert theirs.returncode != 0 and "OfflineModeIsEnabled" in theirs.stderr
        assert proxy.requests == []
    finally:
        proxy.close()


# -------------------------------------------------------------------------------------- verify

REFERENCE_DIGEST_STEP = """
import json, sys
from pathlib import Path
import kernels_data as kd

KINDS = {"MissingFile": kd.DigestViolation.MissingFile, "UnknownFile": kd.DigestViolation.UnknownFile,
         "HashMismatch": kd.DigestViolation.HashMismatch,
         "AlgorithmMismatch": kd.DigestViolation.AlgorithmMismatch}
out = {}
for path in map(Path, sys.argv[1:]):
    metadata = kd.Metadata.read_from_file(path / "metadata.json")
    actual = kd.Digest.hash_variant(metadata.digest.algorithm, path)
    try:
        metadata.digest.validate(actual)
        out[str(path)] = []
    except kd.DigestValidationError as error:
        out[str(path)] = [[next(k for k, t in KINDS.items() if isinstance(v, t)), str(v)]
                          for v in error.violations]
print(json.dumps(out))
"""


def reference_verdicts(paths):
    result = sh([PYTHON, "-c", REFERENCE_DIGEST_STEP, *paths])
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def our_verdicts(kernelhub_bin, target, *flags, env=None):
    result = sh([kernelhub_bin, "verify", target, "--json", *flags], env)
    report = json.loads(result.stdout)
    verdicts = {v["path"]: [[x["kind"], x["message"]] for x in v["violations"]]
                for v in report["variants"]}
    return result.returncode, report, verdicts


def tampered_copies(variant: Path, root: Path) -> dict:
    """Copies of `variant`: untouched, one byte of the shared object flipped, an extra file,
    and a missing file."""
    copies = {}
    for case in ("good", "byte", "extra", "missing"):
        dest = root / case / variant.name
        shutil.copytree(variant, dest, ignore=shutil.ignore_patterns("__pycache__"))
        copies[case] = dest
    [so] = list(copies["byte"].rglob("*.so"))
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0x01
    so.write_bytes(bytes(data))
    (next(copies["extra"].rglob("*.so")).parent / "injected.py").write_text("import os\n")
    next(p for p in copies["missing"].rglob("*.py")).unlink()
    return copies


def test_verify_local_verdicts_match_reference_digest_step(kernelhub_bin, built, tmp_path):
    [variant] = variants_of(built)
    copies = tampered_copies(variant, tmp_path)
    theirs = reference_verdicts([str(p) for p in copies.values()])
    expected_kinds = {"good": [], "byte": ["HashMismatch"], "extra": ["UnknownFile"],
                      "missing": ["MissingFile"]}
    for case, path in copies.items():
        code, report, ours = our_verdicts(kernelhub_bin, path)
        assert ours[str(path)] == theirs[str(path)], case
        assert [kind for kind, _ in ours[str(path)]] == expected_kinds[case]
        assert code == (0 if case == "good" else 1)
        assert report["ok"] == (case == "good")
    # The kernel directory and its build/ name the same variant.
    for target in (built, built / "build"):
        code, report, _ = our_verdicts(kernelhub_bin, target)
        assert code == 0 and [v["variant"] for v in report["variants"]] == [variant.name]


def test_verify_names_files_the_digest_does_not_cover(kernelhub_bin, built, tmp_path):
    """Issue 20 item 2: bytecode and links to folders are outside the digest (the reference's
    digest step finds nothing wrong); verify fails the variant and names each of them."""
    [variant] = variants_of(built)
    copy = tmp_path / variant.name
    shutil.copytree(variant, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"bytecode")
    (tmp_path / "elsewhere").mkdir()
    (copy / "lib").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert reference_verdicts([str(copy)])[str(copy)] == []
    code, report, ours = our_verdicts(kernelhub_bin, copy)
    assert ours[str(copy)] == []
    assert code == 1 and report["ok"] is False
    assert report["variants"][0]["status"] == "uncovered-files"
    assert report["variants"][0]["uncovered"] == ["__pycache__/x.cpython-311.pyc", "lib/"]
    text = sh([kernelhub_bin, "verify", copy]).stdout
    assert "files match the metadata digest, but the variant holds files it does not cover" in text
    assert "not covered by the digest: __pycache__/x.cpython-311.pyc (bytecode" in text
    assert "not covered by the digest: lib/ (a link to a folder" in text


def test_verify_reports_a_missing_digest_distinctly(kernelhub_bin, built, tmp_path):
    [variant] = variants_of(built)
    copy = copy_built(variant, tmp_path / variant.name)
    metadata = json.loads((copy / "metadata.json").read_text())
    del metadata["digest"]
    (copy / "metadata.json").write_text(json.dumps(metadata))
    code, report, _ = our_verdicts(kernelhub_bin, copy)
    assert code == 1 and report["variants"][0]["status"] == "digest-missing"
    text = sh([kernelhub_bin, "verify", copy])
    assert "metadata does not have a digest" in text.stdout
    skipped = sh([kernelhub_bin, "verify", copy, "--filter-no-digest"])
    assert skipped.returncode == 0, skipped.stdout


def test_verify_cached_hub_variant_and_a_corrupted_blob(kernelhub_bin, published, server, tmp_path):
    cache = tmp_path / "hub"
    # The venv's torch is a CUDA build on a machine without a GPU: the cpu variant is the
    # loader's pick only with backend="cpu", which `download` has no flag for.
    done = sh([kernelhub_bin, "download", REPO, "--version", "2", "--all-variants"],
              env_for(server.url, cache))
    assert done.returncode == 0, done.stderr
    variant = Path(done.stdout.strip()) / "build" / published["variant"]
    offline = env_for("http://127.0.0.1:9", cache, offline=True)
    code, report, ours = our_verdicts(kernelhub_bin, REPO, "--version", "2", "--backend", "cpu",
                                      env=offline)
    assert code == 0, report
    assert report["commit"] == published["v2"]
    assert list(ours) == [str(variant)]
    code, report, _ = our_verdicts(kernelhub_bin, REPO, "--version", "2", "--all-variants", env=offline)
    assert code == 0 and [v["variant"] for v in report["variants"]] == sorted([variant.name, FOREIGN])

    [so] = list(variant.rglob("*.so"))
    blob = so.resolve()
    blob.chmod(0o644)
    blob.write_bytes(blob.read_bytes() + b"\0")
    code, report, ours = our_verdicts(kernelhub_bin, REPO, "--version", "2", "--backend", "cpu",
                                      env=offline)
    assert code == 1
    assert ours[str(variant)] == reference_verdicts([str(variant)])[str(variant)]
    assert [kind for kind, _ in ours[str(variant)]] == ["HashMismatch"]


def test_verify_a_kernel_not_in_the_cache_says_what_to_run(kernelhub_bin, tmp_path):
    result = sh([kernelhub_bin, "verify", REPO, "--revision", "0" * 40],
                env_for("http://127.0.0.1:9", tmp_path / "hub", offline=True))
    assert result.returncode == 1
    assert "kernelhub download" in result.stderr and REPO in result.stderr
