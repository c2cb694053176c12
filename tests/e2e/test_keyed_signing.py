# SPDX-License-Identifier: Apache-2.0
"""Signing for private hubs (issue 14 item 3): `kernel-builder keygen` and `kernel-builder sign`
write a keyed Sigstore bundle, `kernelhub serve` publishes the keys its config.toml trusts, and
get_kernel(require_signature=True) loads a variant signed by one of them and refuses, before
importing anything, one signed by another key, one changed after signing and an unsigned one.

Each variant's __init__.py writes a marker file when imported, so a refusal that came after the
import would leave the marker behind; the loads run in fresh interpreters.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hub_cache_support import publish, run_python
from serve_helpers import Served, wait_for_variant_checks

kernelhub = pytest.importorskip("kernelhub")
native = pytest.importorskip("kernelhub._kernelhub")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, ed25519  # noqa: E402

TOKEN = "kh-keyed-token"


# The "bytecode" kernel: a signed module that says who it is and imports an optional helper
# that it does not ship, where a lone helper.pyc would be found.
BYTECODE_INIT = """
try:
    from . import helper
    HELPER = helper.VALUE
except ImportError:
    HELPER = None


def hello():
    return "signed"
"""


def _variant(folder: Path, name: str, marker: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps(
        {"id": f"_{name.replace('-', '_')}_cpu_0key", "name": name, "version": 1,
         "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}))
    (folder / "__init__.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n{extra}")
    return folder


def _signed(kernel_builder, folder: Path, name: str, marker: Path, key: Path | None) -> Path:
    extra = BYTECODE_INIT if name == "bytecode" else ""
    variant = _variant(folder / "build" / "torch-cpu", name, marker, extra)
    subprocess.run([str(kernel_builder), "hash", "--write", str(variant)], check=True,
                   capture_output=True)
    if key is not None:
        signed = subprocess.run([str(kernel_builder), "sign", str(folder), "--key", str(key)],
                                check=True, capture_output=True, text=True)
        assert "torch-cpu: signed metadata.json with" in signed.stdout
    return variant


def _keygen(kernel_builder, path: Path, algorithm: str) -> Path:
    result = subprocess.run([str(kernel_builder), "keygen", "--output", str(path),
                             "--algorithm", algorithm], check=True, capture_output=True,
                            text=True)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert path.with_suffix(".pub").exists()
    return path


@pytest.fixture(scope="module")
def keyed_hub(kernelhub_bin, kernel_builder, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keyed-hub")
    team = _keygen(kernel_builder, tmp / "team.pem", "ecdsa-p256")
    other = _keygen(kernel_builder, tmp / "other.pem", "ed25519")
    root = tmp / "root"
    (root / "keys").mkdir(parents=True)
    (root / "keys" / "team.pub").write_bytes(team.with_suffix(".pub").read_bytes())
    (root / "config.toml").write_text(
        "[organizations.team]\ntrustedKernelPublisher = true\n\n"
        "[signing]\ntrusted-keys = [\"keys/team.pub\"]\n")
    (tmp / "tokens").write_text(TOKEN + "\n")
    server = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    markers, variants = {}, {}
    for name, key in (("signed", team), ("other-key", other), ("file-changed", team),
                      ("metadata-changed", team), ("unsigned", None), ("bytecode", team)):
        markers[name] = tmp / f"{name}.imported"
        variants[name] = _signed(kernel_builder, tmp / name, name, markers[name], key)
    init = variants["file-changed"] / "__init__.py"
    init.write_text(init.read_text() + "# changed after signing\n")
    metadata = variants["metadata-changed"] / "metadata.json"
    metadata.write_bytes(metadata.read_bytes().replace(b'"version": 1', b'"version":  1'))
    for name in variants:
        publish(url, TOKEN, f"team/{name}", tmp / name)
        wait_for_variant_checks(Served(url), f"kernels/team/{name}")
    yield {"url": url, "markers": markers, "variants": variants, "team": team, "other": other}
    server.terminate()
    server.wait(timeout=10)


LOAD = """
import json, sys, kernelhub
try:
    kernelhub.get_kernel({repo!r}, version=1, backend="cpu"{extra})
    print(json.dumps({{"loaded": True}}))
except ImportError as error:
    print(json.dumps({{"loaded": False, "error": str(error),
                       "modules": [m for m in sys.modules if "_0key" in m]}}))
"""


def _environment(hub, home: Path) -> dict:
    # The hub's keys are kept in this user's state folder (XDG_STATE_HOME), never in the cache.
    return {"HF_ENDPOINT": hub["url"], "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "cache"),
            "XDG_STATE_HOME": str(home / "state"), "NO_PROXY": "127.0.0.1,localhost"}


def _load(hub, name, home: Path, extra="", required=True, **env):
    hub["markers"][name].unlink(missing_ok=True)
    environment = _environment(hub, home)
    environment.update(env)
    if required:
        extra = ", require_signature=True" + extra
    result = run_python(LOAD.format(repo=f"team/{name}", extra=extra), environment, check=False)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    imported = hub["markers"][name].exists()
    assert imported == outcome["loaded"], outcome
    if not outcome["loaded"]:
        assert outcome["modules"] == []
        assert "refusing to load kernel variant" in outcome["error"]
    return outcome


def test_the_hub_publishes_its_trusted_keys(keyed_hub):
    import urllib.request
    with urllib.request.urlopen(keyed_hub["url"] + "/api/kernelhub/trusted-keys",
                                timeout=30) as answer:
        keys = json.load(answer)["keys"]
    team_pub = keyed_hub["team"].with_suffix(".pub").read_bytes()
    public = serialization.load_pem_public_key(team_pub)
    der = public.public_bytes(serialization.Encoding.DER,
                              serialization.PublicFormat.SubjectPublicKeyInfo)
    assert keys == [{"hint": base64.b64encode(hashlib.sha256(der).digest()).decode(),
                     "algorithm": "ECDSA P-256", "pem": team_pub.decode()}]


def test_a_kernel_signed_with_the_trusted_key_loads(keyed_hub, tmp_path):
    assert _load(keyed_hub, "signed", tmp_path) == {"loaded": True}


@pytest.mark.parametrize("name, reason", [
    ("other-key", "which is not a trusted key"),
    ("file-changed", "kernel integrity check failed\nFile hash mismatch for __init__.py"),
    ("metadata-changed", "metadata signature verification failed"),
    ("unsigned", "signature not found"),
])
def test_other_keys_and_changes_are_refused_before_import(keyed_hub, name, reason, tmp_path):
    outcome = _load(keyed_hub, name, tmp_path)
    assert outcome["loaded"] is False
    assert reason in outcome["error"]


def test_local_keys_replace_the_hubs(keyed_hub, tmp_path):
    """KERNELHUB_TRUSTED_KEYS and trusted_keys= pin the keys: the hub's are then not used."""
    other_pub = str(keyed_hub["other"].with_suffix(".pub"))
    assert _load(keyed_hub, "other-key", tmp_path / "a",
                 KERNELHUB_TRUSTED_KEYS=other_pub) == {"loaded": True}
    refused = _load(keyed_hub, "signed", tmp_path / "b", KERNELHUB_TRUSTED_KEYS=other_pub)
    assert "which is not a trusted key" in refused["error"]
    assert _load(keyed_hub, "other-key", tmp_path / "c",
                 extra=f", trusted_keys=[{other_pub!r}]") == {"loaded": True}


def test_offline_loads_use_the_cached_keys(keyed_hub, tmp_path):
    assert _load(keyed_hub, "signed", tmp_path) == {"loaded": True}
    assert _load(keyed_hub, "signed", tmp_path, HF_HUB_OFFLINE="1") == {"loaded": True}
    # A cache that holds the kernel (loaded with local keys, so the hub's were never fetched)
    # but not the hub's keys: offline, nothing to check against, so refused.
    team_pub = str(keyed_hub["team"].with_suffix(".pub"))
    assert _load(keyed_hub, "signed", tmp_path / "pinned",
                 KERNELHUB_TRUSTED_KEYS=team_pub) == {"loaded": True}
    refused = _load(keyed_hub, "signed", tmp_path / "pinned", HF_HUB_OFFLINE="1")
    assert "offline and none kept" in refused["error"]


def test_offline_keys_are_not_taken_from_the_cache(keyed_hub, kernel_builder, tmp_path):
    """Issue 20 item 3: whoever can write the cache adds a key of their own to the key list the
    cache used to keep, and replaces a cached variant with one signed by that key. Offline the
    loader must still trust only the hub's keys (kept outside the cache), as it does online."""
    home = tmp_path / "home"
    assert _load(keyed_hub, "signed", home) == {"loaded": True}

    evil = _keygen(kernel_builder, tmp_path / "evil.pem", "ed25519")
    forged = tmp_path / "forged"
    shutil.copytree(keyed_hub["variants"]["signed"].parent.parent, forged)
    variant = forged / "build" / "torch-cpu"
    (variant / "__init__.py").write_text((variant / "__init__.py").read_text() + "FORGED = 1\n")
    subprocess.run([str(kernel_builder), "hash", "--write", str(variant)], check=True,
                   capture_output=True)
    subprocess.run([str(kernel_builder), "sign", str(forged), "--key", str(evil)], check=True,
                   capture_output=True)
    [cached] = (home / "cache").glob("kernels--team--signed/snapshots/*/build/torch-cpu")
    for file in variant.iterdir():
        (cached / file.name).unlink()
        shutil.copy(file, cached / file.name)  # plain files: no blob to check them against
    keys = home / "cache" / ".kernelhub" / "trusted-keys"
    keys.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(keyed_hub["url"].encode()).hexdigest()[:32] + ".pem"
    team_pub = keyed_hub["team"].with_suffix(".pub").read_text()
    for pem in {keys / name, *keys.glob("*.pem")}:
        pem.write_text((pem.read_text() if pem.exists() else team_pub) +
                       evil.with_suffix(".pub").read_text())

    for env in ({"HF_HUB_OFFLINE": "1"}, {}):
        refused = _load(keyed_hub, "signed", home, **env)
        assert refused["loaded"] is False, env
        assert "which is not a trusted key" in refused["error"]
    assert list((home / "state" / "kernelhub" / "trusted-keys").glob("*.pem"))


def test_bytecode_in_the_cache_never_runs(keyed_hub, kernelhub_bin, tmp_path):
    """Issue 20 item 2: the digest skips __pycache__/ and *.pyc, so bytecode dropped into the
    cache is outside what was signed. An unchecked-hash .pyc beside the signed __init__.py, and a
    lone helper.pyc where the signed code tries an optional import, must not run under
    require_signature=True; verify-signature names them."""
    home = tmp_path / "home"
    assert _load(keyed_hub, "bytecode", home) == {"loaded": True}
    [cached] = (home / "cache").glob("kernels--team--bytecode/snapshots/*/build/torch-cpu")
    assert not (cached / "__pycache__").exists()  # the loader writes no bytecode either
    plant = f"""
import py_compile, sys
from pathlib import Path
variant = Path({str(cached)!r})
(variant / "__pycache__").mkdir(exist_ok=True)
evil = Path({str(tmp_path / "evil.py")!r})
evil.write_text("def hello():\\n    return 'PWNED'\\n")
py_compile.compile(str(evil), cfile=str(variant / "__pycache__" /
                   f"__init__.{{sys.implementation.cache_tag}}.pyc"),
                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
helper = Path({str(tmp_path / "helper.py")!r})
helper.write_text("VALUE = 'PWNED'\\n")
py_compile.compile(str(helper), cfile=str(variant / "helper.pyc"))
"""
    run_python(plant, {})
    outcome = run_python(f"""
import json, kernelhub
kernel = kernelhub.get_kernel("team/bytecode", version=1, backend="cpu", require_signature=True)
print(json.dumps([kernel.hello(), kernel.HELPER]))
""", _environment(keyed_hub, home))
    assert json.loads(outcome.stdout.strip().splitlines()[-1]) == ["signed", None]
    assert keyed_hub["markers"]["bytecode"].exists()

    verified = subprocess.run(
        [str(kernelhub_bin), "verify-signature", str(cached), "--trusted-key",
         str(keyed_hub["team"].with_suffix(".pub"))],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert verified.returncode == 1, verified.stdout
    assert "files the signed digest does not cover" in verified.stdout
    assert f"not covered by the digest: __pycache__/__init__.{sys.implementation.cache_tag}.pyc" \
        in verified.stdout
    assert "not covered by the digest: helper.pyc" in verified.stdout


def test_a_variant_changed_after_signing_is_refused_on_every_load(keyed_hub, tmp_path):
    """Issue 20 item 9: the digest in metadata.json is checked on every Hub load, not only when
    a signature is required: a file changed on the hub after signing is refused by name."""
    refused = _load(keyed_hub, "file-changed", tmp_path, required=False)
    assert refused["loaded"] is False
    assert "kernel integrity check failed\nFile hash mismatch for __init__.py" in refused["error"]
    assert "(signature required)" not in refused["error"]
    assert _load(keyed_hub, "signed", tmp_path / "b", required=False) == {"loaded": True}


def _variant_row(hub, name: str) -> list[str]:
    """The cells of the kernel page's row for torch-cpu, as text."""
    import html
    import re
    import urllib.request
    with urllib.request.urlopen(f"{hub['url']}/kernels/team/{name}", timeout=30) as answer:
        page = answer.read().decode()
    row = re.search(r'<tr data-variant="torch-cpu"[^>]*>(.*?)</tr>', page, re.S)
    assert row, page
    return [html.unescape(re.sub(r"<[^>]+>", "", cell))
            for cell in re.findall(r"<td>(.*?)</td>", row.group(1), re.S)]


def test_the_kernel_page_shows_what_the_hub_verified(keyed_hub):
    """Issue 20 item 9: the page said "Signed: yes" for any metadata.json.sigstore; it now shows
    the hub's own check of the files against the digest and of the signature against its keys."""
    import urllib.request
    with urllib.request.urlopen(keyed_hub["url"] + "/api/kernelhub/trusted-keys",
                                timeout=30) as answer:
        team_hint = json.load(answer)["keys"][0]["hint"]
    changed = _variant_row(keyed_hub, "file-changed")
    assert changed[3].startswith("sha256 over 1 files: files do not match: File hash mismatch "
                                 "for __init__.py: expected: "), changed
    assert changed[4] == f"valid (key {team_hint}), but the files changed after signing"
    good = _variant_row(keyed_hub, "signed")
    assert good[3:5] == ["sha256 over 1 files: files match", f"valid (key {team_hint})"]
    # Checked after the upload, not when the page was first shown.
    assert good[5].startswith("at upload ("), good
    other = _variant_row(keyed_hub, "other-key")
    assert other[3] == "sha256 over 1 files: files match"
    assert other[4].startswith("not valid: SignatureVerificationFailure: signed with key ")
    assert _variant_row(keyed_hub, "unsigned")[3:5] == ["sha256 over 1 files: files match", "no"]


def test_the_bundle_is_a_real_keyed_sigstore_bundle(keyed_hub):
    """Checked with other people's code: sigstore's protobuf models read it, `cryptography`
    verifies its signature with the public key, the hint is that key's SPKI hash; sigstore 4.5.1
    (so kernels.verify) cannot verify keyed bundles and says so, as our verifier does without
    keys."""
    from sigstore_models.bundle.v1 import Bundle as ProtoBundle
    variant = keyed_hub["variants"]["signed"]
    bundle_text = (variant / "metadata.json.sigstore").read_text()
    proto = ProtoBundle.from_json(bundle_text)
    assert proto.verification_material.public_key.hint is not None
    metadata = (variant / "metadata.json").read_bytes()
    signature = base64.b64decode(json.loads(bundle_text)["messageSignature"]["signature"])
    for key_path, name in ((keyed_hub["team"], "signed"),):
        public = serialization.load_pem_public_key(key_path.with_suffix(".pub").read_bytes())
        public.verify(signature, metadata, ec.ECDSA(hashes.SHA256()))
        der = public.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
        assert proto.verification_material.public_key.hint == \
            base64.b64encode(hashlib.sha256(der).digest()).decode()
    digest = json.loads(bundle_text)["messageSignature"]["messageDigest"]
    assert digest == {"algorithm": "SHA2_256",
                      "digest": base64.b64encode(hashlib.sha256(metadata).digest()).decode()}
    # Ed25519: the signature is over the bytes themselves.
    other = keyed_hub["variants"]["other-key"]
    public = serialization.load_pem_public_key(keyed_hub["other"].with_suffix(".pub").read_bytes())
    assert isinstance(public, ed25519.Ed25519PublicKey)
    public.verify(base64.b64decode(json.loads((other / "metadata.json.sigstore").read_text())
                                   ["messageSignature"]["signature"]),
                  (other / "metadata.json").read_bytes())

    kernels_verify = pytest.importorskip("kernels.verify")
    reference = kernels_verify.verify_variant(variant)
    kind, reason, _ = native.verify_signed_variant(variant)
    assert (kind, reason) == (type(reference).__name__, reference.reason) == \
        ("SignatureBundleInvalid", "expected certificate in bundle")


def test_verify_signature_reports_keyed_bundles(keyed_hub, kernelhub_bin, tmp_path):
    env = dict(os.environ, HF_ENDPOINT=keyed_hub["url"], HF_HOME=str(tmp_path / "home"),
               HF_HUB_CACHE=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"),
               NO_PROXY="127.0.0.1,localhost")

    def verify(name, *extra):
        return subprocess.run([str(kernelhub_bin), "verify-signature", f"team/{name}",
                               "--version", "1", "--all-variants", *extra],
                              capture_output=True, text=True, timeout=300, env=env)

    good = verify("signed")
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.startswith("✅ torch-cpu: kernel metadata is correctly signed with "
                                  "trusted key ")
    other = verify("other-key")
    assert other.returncode == 1
    assert "metadata signature verification failed:\nsigned with key" in other.stdout
    pinned = verify("other-key", "--trusted-key", str(keyed_hub["other"].with_suffix(".pub")),
                    "--json")
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    variant = json.loads(pinned.stdout)["variants"][0]
    assert variant["result"] == "Success"
    assert variant["key"]["source"] == f"\"{keyed_hub['other'].with_suffix('.pub')}\""
    # A local folder with no keys: the reference's verdict on a keyed bundle.
    local = subprocess.run([str(kernelhub_bin), "verify-signature",
                            str(keyed_hub["variants"]["signed"])],
                           capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in env.items() if k != "KERNELHUB_TRUSTED_KEYS"})
    assert local.returncode == 1
    assert "invalid signature bundle:\nexpected certificate in bundle" in local.stdout
