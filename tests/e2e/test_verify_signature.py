# SPDX-License-Identifier: Apache-2.0
"""`kernelhub verify-signature` against the reference (issue 14): sigstore 4.5.1 and kernels 0.17.2.

Differential, case by case: every sigstore-conformance bundle (tests/data/sigstore-conformance,
real bundles, artifacts and trusted roots), our own cases in its layout
(tests/data/sigstore-kernelhub: keys whose window starts after the time they vouch for) and
tampered copies made here at test time (one
byte of the artifact, of the certificate, of the log entry, of the checkpoint, of the signed
entry timestamp, of the TSA timestamp; a wrong identity; schema violations) is put in a variant
folder as metadata.json + metadata.json.sigstore. Our result kind must equal
`kernels.verify.verify_variant`'s, and our signature verdict the `sigstore` package's own
`verify_artifact` verdict. The reference refreshes its trusted root online on every call; here
it gets the same root file we get, offline.

Deliberate mapping (signatures.md §1.2): where the reference lets an exception escape instead of
returning a kind, an exception while parsing the bundle counts as SignatureBundleInvalid and one
while verifying as SignatureVerificationFailure.

Output: the reference's `verify_signature` CLI function runs on the same kernel folder (its
download replaced by that folder) and prints the same lines and exit status as ours.

Signed kernel variants: a private Sigstore instance made at test time (private_sigstore.py)
signs variants' metadata.json for kernels-community's build workflow, so both sides run their
default policies against its trusted root and every kind (Success, the digest kinds, an expired
certificate, an unknown CT log, another workflow) is compared, with the CLI lines.
"""
import base64
import contextlib
import io
import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest

from conftest import REPO_ROOT, run

sigstore_models = pytest.importorskip("sigstore.models")
sigstore_verify = pytest.importorskip("sigstore.verify")
kernels_verify = pytest.importorskip("kernels.verify")

CONFORMANCE = REPO_ROOT / "tests" / "data" / "sigstore-conformance" / "bundle-verify"
# Ours, in the same layout: trusted roots the conformance suite has no case for (README there).
OWN_CASES = REPO_ROOT / "tests" / "data" / "sigstore-kernelhub" / "bundle-verify"
PRODUCTION_ROOT = REPO_ROOT / "data" / "sigstore" / "trusted_root.json"
BEACON = ("https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
          ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main")
SIGNATURE_OK_KINDS = {"Success", "MetadataInvalid", "DigestMissing", "DigestVerificationFailure"}


def _repo_of(identity: str) -> str:
    return identity[len("https://github.com/"):].split("/.github/")[0]


class Case:
    def __init__(self, name, bundle: bytes, artifact: bytes, root: Path, identity: str):
        self.name, self.bundle, self.artifact = name, bundle, artifact
        self.root, self.identity = root, identity


def _conformance_cases():
    cases = []
    folders = sorted(p for p in CONFORMANCE.iterdir() if p.is_dir())
    folders += sorted(p for p in OWN_CASES.iterdir() if p.is_dir())
    for folder in folders:
        artifact = folder / "artifact" if (folder / "artifact").exists() else CONFORMANCE / "a.txt"
        root = folder / "trusted_root.json"
        identity = BEACON
        if (folder / "identity").exists():
            named = (folder / "identity").read_text().strip()
            # A GitHub workflow identity becomes its GitHubWorkflowPolicy; any other identity
            # (a Google service account) cannot be one, and both sides keep the beacon's policy.
            if named.startswith("https://github.com/"):
                identity = named
        cases.append(Case(folder.name, (folder / "bundle.sigstore.json").read_bytes(),
                          artifact.read_bytes(), root if root.exists() else PRODUCTION_ROOT,
                          identity))
    return cases


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def _tampered_cases():
    """Copies of real bundles changed in one place each, made at test time."""
    happy = json.loads((CONFORMANCE / "happy-path-v0.3" / "bundle.sigstore.json").read_text())
    rekor2 = json.loads((CONFORMANCE / "rekor2-happy-path" / "bundle.sigstore.json").read_text())
    rekor2_root = CONFORMANCE / "rekor2-happy-path" / "trusted_root.json"
    artifact = (CONFORMANCE / "a.txt").read_bytes()

    def edit(document, change):
        copy = json.loads(json.dumps(document))
        change(copy)
        return json.dumps(copy).encode()

    def b64_flip(holder, key, at):
        raw = base64.b64decode(holder[key])
        holder[key] = base64.b64encode(_flip(raw, at if at >= 0 else len(raw) + at)).decode()

    material = lambda d: d["verificationMaterial"]  # noqa: E731
    entry = lambda d: d["verificationMaterial"]["tlogEntries"][0]  # noqa: E731
    cases = [
        Case("tampered-artifact-byte", json.dumps(happy).encode(), _flip(artifact, 3),
             PRODUCTION_ROOT, BEACON),
        Case("tampered-certificate-signature-byte",
             edit(happy, lambda d: b64_flip(material(d)["certificate"], "rawBytes", -5)),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-certificate-extension-byte",
             edit(happy, lambda d: b64_flip(material(d)["certificate"], "rawBytes", 600)),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-log-entry-body-byte",
             edit(happy, lambda d: b64_flip(entry(d), "canonicalizedBody", 40)),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-log-entry-integrated-time",
             edit(happy, lambda d: entry(d).update(
                 integratedTime=str(int(entry(d)["integratedTime"]) + 1))),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-log-entry-proof-hash",
             edit(happy, lambda d: b64_flip({"h": entry(d)["inclusionProof"]["hashes"]}["h"], 0, 2)),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-signed-entry-timestamp",
             edit(happy, lambda d: b64_flip(entry(d)["inclusionPromise"],
                                            "signedEntryTimestamp", -3)),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-checkpoint-size",
             edit(happy, lambda d: entry(d)["inclusionProof"]["checkpoint"].update(
                 envelope=entry(d)["inclusionProof"]["checkpoint"]["envelope"].replace(
                     "\n", "\n1", 1))),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-message-signature-byte",
             edit(happy, lambda d: b64_flip(d["messageSignature"], "signature", 10)),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("tampered-tsa-timestamp-byte",
             edit(rekor2, lambda d: b64_flip(
                 material(d)["timestampVerificationData"]["rfc3161Timestamps"][0],
                 "signedTimestamp", -10)),
             artifact, rekor2_root, BEACON),
        Case("wrong-identity-workflow", json.dumps(happy).encode(), artifact, PRODUCTION_ROOT,
             BEACON.replace("extremely-dangerous-oidc-beacon.yml", "other.yml")),
        Case("wrong-identity-repository", json.dumps(happy).encode(), artifact, PRODUCTION_ROOT,
             BEACON.replace("public-oidc-beacon", "public-oidc-beacon2")),
        Case("schema-unknown-field",
             edit(happy, lambda d: material(d).update(extra=1)), artifact, PRODUCTION_ROOT, BEACON),
        Case("schema-log-index-number",
             edit(happy, lambda d: entry(d).update(logIndex=int(entry(d)["logIndex"]))),
             artifact, PRODUCTION_ROOT, BEACON),
        Case("rekor2-staging-bundle-against-production",
             json.dumps(rekor2).encode(), artifact, PRODUCTION_ROOT, BEACON),
    ]
    return cases


ALL_CASES = _conformance_cases() + _tampered_cases()


def _reference_kind(variant: Path, case: Case) -> str:
    """kernels.verify.verify_variant's kind, offline, against `case.root`."""
    try:
        root = sigstore_models.TrustedRoot.from_file(str(case.root))
    except Exception:  # noqa: BLE001 - any refusal of the root
        return "TrustedRootInvalid"
    try:
        sigstore_models.Bundle.from_json(case.bundle)
    except sigstore_models.InvalidBundle:
        pass  # verify_variant returns SignatureBundleInvalid itself
    except Exception:  # noqa: BLE001 - escapes kernels while parsing: our deliberate mapping
        return "SignatureBundleInvalid"
    policy = kernels_verify.GitHubWorkflowPolicy(repo_id=_repo_of(case.identity),
                                                 signer_uris=[case.identity])
    offline = classmethod(lambda cls, **_: sigstore_verify.Verifier(trusted_root=root))
    with mock.patch.object(kernels_verify.Verifier, "production", offline):
        try:
            return type(kernels_verify.verify_variant(variant, [policy])).__name__
        except Exception:  # noqa: BLE001 - escapes kernels while verifying
            return "SignatureVerificationFailure"


def _sigstore_accepts(case: Case) -> bool:
    """The sigstore package's own verdict on the signature alone."""
    try:
        root = sigstore_models.TrustedRoot.from_file(str(case.root))
        bundle = sigstore_models.Bundle.from_json(case.bundle)
        policy = kernels_verify.GitHubWorkflowPolicy(repo_id=_repo_of(case.identity),
                                                     signer_uris=[case.identity])
        sigstore_verify.Verifier(trusted_root=root).verify_artifact(case.artifact, bundle, policy)
    except Exception:  # noqa: BLE001 - every refusal
        return False
    return True


def _our_kind(kernelhub_bin, variant: Path, case: Case) -> str:
    args = [kernelhub_bin, "verify-signature", variant, "--json", "--signer-workflow",
            case.identity]
    if case.root != PRODUCTION_ROOT:
        args += ["--trusted-root", case.root]
    result = run(args)
    if result.returncode != 0 and not result.stdout.strip():
        assert "trusted root" in result.stderr, result.stderr
        return "TrustedRootInvalid"
    document = json.loads(result.stdout)
    [verdict] = document["variants"]
    assert result.returncode == (0 if verdict["result"] == "Success" else 1)
    return verdict["result"]


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_result_kind_matches_the_reference(case, kernelhub_bin, tmp_path):
    variant = tmp_path / "torch-cpu"
    variant.mkdir()
    (variant / "metadata.json").write_bytes(case.artifact)
    (variant / "metadata.json.sigstore").write_bytes(case.bundle)
    ours = _our_kind(kernelhub_bin, variant, case)
    reference = _reference_kind(variant, case)
    assert ours == reference, f"{case.name}: ours {ours}, kernels {reference}"
    if ours != "TrustedRootInvalid":
        assert (ours in SIGNATURE_OK_KINDS) == _sigstore_accepts(case), case.name


def test_the_suite_sees_both_verdicts():
    """The cases above would prove little if they all failed: both sides accept some."""
    accepted = [c.name for c in ALL_CASES if _sigstore_accepts(c)]
    assert {"happy-path-v0.1", "happy-path-v0.3", "rekor2-happy-path"} <= set(accepted)
    assert len(accepted) >= 12
    assert len(ALL_CASES) - len(accepted) >= 50


# --- the CLI's output against kernels' verify_signature on the same folders ---------------

def _make_kernel(root: Path) -> Path:
    """build/ with one variant per outcome the default policies can give offline."""
    build = root / "build"
    happy = (CONFORMANCE / "happy-path-v0.3" / "bundle.sigstore.json").read_bytes()
    keyed = (CONFORMANCE / "managed-key-happy-path" / "bundle.sigstore.json").read_bytes()
    artifact = (CONFORMANCE / "a.txt").read_bytes()
    layout = {
        # signed by the conformance beacon, not by kernels-community: "0 of 1 policies"
        "torch29-cxx11-cu126-x86_64-linux": {"metadata.json": artifact,
                                              "metadata.json.sigstore": happy},
        # a keyed bundle: sigstore refuses it at parse time, "expected certificate in bundle"
        "torch29-cxx11-cu128-x86_64-linux": {"metadata.json": artifact,
                                              "metadata.json.sigstore": keyed},
        "torch29-cxx11-cpu-x86_64-linux": {"metadata.json": b"{}"},  # unsigned
        "torch-universal": {"metadata.json.sigstore": happy},        # no metadata.json
        "torch28-cxx11-cpu-x86_64-linux": {"metadata.json": artifact,
                                            "metadata.json.sigstore": b"{\"mediaType\": \"x\"}"},
    }
    for variant, files in layout.items():
        (build / variant).mkdir(parents=True)
        for name, data in files.items():
            (build / variant / name).write_bytes(data)
    return root


def _blocks(text: str) -> list[str]:
    """Per-variant blocks, sorted: the reference walks the variants in set order."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.startswith(("✅", "❌")) and current:
            blocks.append("\n".join(current))
            current = []
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return sorted(blocks)


def _reference_cli(kernel: Path, flags: list[str]) -> tuple[str, int]:
    cli = pytest.importorskip("kernels.cli.verify_signature")
    args = SimpleNamespace(repo_id="org/kernel", version=1, all_variants=True,
                           filter_unsigned="--filter-unsigned" in flags,
                           filter_no_digest="--filter-no-digest" in flags)
    root = sigstore_models.TrustedRoot.from_file(str(PRODUCTION_ROOT))
    offline = classmethod(lambda cls, **_: sigstore_verify.Verifier(trusted_root=root))
    out = io.StringIO()
    code = 0
    with mock.patch.object(cli, "select_revision_or_version", lambda *a, **k: "main"), \
            mock.patch.object(cli, "install_kernel_all_variants", lambda *a, **k: kernel / "build"), \
            mock.patch.object(kernels_verify.Verifier, "production", offline), \
            contextlib.redirect_stdout(out):
        try:
            cli.verify_signature(args)
        except SystemExit as exit_:
            code = exit_.code
    return out.getvalue(), code


@pytest.mark.parametrize("flags", [[], ["--filter-unsigned"], ["--filter-no-digest"],
                                   ["--filter-unsigned", "--filter-no-digest"]])
def test_cli_output_matches_the_reference(flags, kernelhub_bin, tmp_path):
    kernel = _make_kernel(tmp_path / "kernel")
    ours = run([kernelhub_bin, "verify-signature", kernel, *flags])
    reference_out, reference_code = _reference_cli(kernel, flags)
    # Texts of the reasons sigstore words itself (pydantic's schema errors) are not an
    # interface (signatures.md §1.2); the one variant that has such a reason is compared by
    # its first line only.
    def normalise(blocks):
        return [b.split("\n")[0] if "invalid signature bundle" in b and "certificate" not in b
                else b for b in blocks]
    assert normalise(_blocks(ours.stdout)) == normalise(_blocks(reference_out)), ours.stdout
    assert ours.returncode == reference_code == 1


def test_cli_exit_status_zero_when_everything_is_filtered(kernelhub_bin, tmp_path):
    kernel = tmp_path / "kernel"
    (kernel / "build" / "torch-universal").mkdir(parents=True)
    (kernel / "build" / "torch-universal" / "metadata.json").write_text("{}")
    ours = run([kernelhub_bin, "verify-signature", kernel, "--filter-unsigned"])
    reference_out, reference_code = _reference_cli(kernel, ["--filter-unsigned"])
    assert (ours.stdout, ours.returncode) == (reference_out, reference_code or 0) == ("", 0)


def test_a_hub_kernel_needs_a_version_or_revision(kernelhub_bin):
    result = run([kernelhub_bin, "verify-signature", "org/not-a-local-dir"])
    assert result.returncode != 0
    assert "--version or --revision" in result.stderr


# --- signed variants from a private Sigstore (tests/e2e/private_sigstore.py) ------------------
#
# Signed here for kernels-community's build workflow, so both sides run with their default
# policies (DEFAULT_POLICIES / no --signer-workflow) against the private trusted root: every
# result kind, Success and the digest kinds included.

KERNELS_COMMUNITY = ("https://github.com/huggingface/kernels-community/.github/workflows/"
                     "build.yaml@refs/heads/main")


@pytest.fixture(scope="module")
def private(tmp_path_factory):
    private_sigstore = pytest.importorskip("private_sigstore")
    instance = private_sigstore.PrivateSigstore()
    root = instance.write_trusted_root(tmp_path_factory.mktemp("private") / "trusted_root.json")
    return instance, root


def _signed_variant(kernel_builder, folder: Path, private, *, digest=True,
                    identity=KERNELS_COMMUNITY, **sign_options) -> Path:
    instance, _root = private
    (folder / "relu").mkdir(parents=True)
    (folder / "relu" / "__init__.py").write_text("from ._ops import ops\n")
    (folder / "relu" / "_ops.py").write_text("ops = None\n")
    (folder / "relu" / "_relu.abi3.so").write_bytes(b"\x7fELF" + bytes(range(256)) * 4)
    (folder / "metadata.json").write_text(json.dumps(
        {"id": "_relu_cpu_signed", "name": "relu", "version": 1, "license": "apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    if digest:
        run([kernel_builder, "hash", "--write", folder], check=True)
    metadata = (folder / "metadata.json").read_bytes()
    (folder / "metadata.json.sigstore").write_bytes(
        instance.sign(metadata, identity, **sign_options))
    return folder


def _private_variants(kernel_builder, build: Path, private) -> dict[str, Path]:
    instance, _root = private
    made = {}

    def variant(name, **options):
        made[name] = _signed_variant(kernel_builder, build / name, private, **options)
        return made[name]

    variant("torch29-cxx11-cpu-x86_64-linux")                       # Success
    changed = variant("torch29-cxx11-cu126-x86_64-linux")
    (changed / "relu" / "_ops.py").write_text("ops = 1\n")          # HashMismatch
    (changed / "relu" / "extra.py").write_text("\n")                # UnknownFile
    (changed / "relu" / "__init__.py").unlink()                     # MissingFile
    variant("torch29-cxx11-cu128-x86_64-linux", digest=False)       # DigestMissing
    edited = variant("torch29-cxx11-cu129-x86_64-linux")
    text = (edited / "metadata.json").read_text()
    (edited / "metadata.json").write_text(text.replace('"version": 1', '"version": 2')
                                          if '"version": 1' in text else text + " ")
    variant("torch29-cxx11-cu130-x86_64-linux", integrated_offset=700)  # after notAfter
    from cryptography.hazmat.primitives.asymmetric import ec

    other_ct = ec.generate_private_key(ec.SECP256R1())
    variant("torch28-cxx11-cpu-x86_64-linux", ct_key=other_ct)          # SCT by an unknown log
    variant("torch28-cxx11-cu126-x86_64-linux",
            identity=KERNELS_COMMUNITY.replace("build.yaml", "evil.yaml"))
    unsigned = variant("torch28-cxx11-cu128-x86_64-linux")
    (unsigned / "metadata.json.sigstore").unlink()
    no_metadata = variant("torch28-cxx11-cu129-x86_64-linux")
    (no_metadata / "metadata.json").unlink()
    bad = build / "torch27-cxx11-cpu-x86_64-linux"
    bad.mkdir(parents=True)
    (bad / "metadata.json").write_bytes(b'{"name": "relu"}')
    (bad / "metadata.json.sigstore").write_bytes(instance.sign(b'{"name": "relu"}',
                                                               KERNELS_COMMUNITY))
    made["torch27-cxx11-cpu-x86_64-linux"] = bad
    return made


EXPECTED_PRIVATE = {
    "torch29-cxx11-cpu-x86_64-linux": "Success",
    "torch29-cxx11-cu126-x86_64-linux": "DigestVerificationFailure",
    "torch29-cxx11-cu128-x86_64-linux": "DigestMissing",
    "torch29-cxx11-cu129-x86_64-linux": "SignatureVerificationFailure",
    "torch29-cxx11-cu130-x86_64-linux": "SignatureVerificationFailure",
    "torch28-cxx11-cpu-x86_64-linux": "SignatureVerificationFailure",
    "torch28-cxx11-cu126-x86_64-linux": "SignatureVerificationFailure",
    "torch28-cxx11-cu128-x86_64-linux": "SignatureBundleMissing",
    "torch28-cxx11-cu129-x86_64-linux": "MetadataMissing",
    "torch27-cxx11-cpu-x86_64-linux": "MetadataInvalid",
}


def _reference_private(variant: Path, root: Path) -> str:
    trusted = sigstore_models.TrustedRoot.from_file(str(root))
    offline = classmethod(lambda cls, **_: sigstore_verify.Verifier(trusted_root=trusted))
    with mock.patch.object(kernels_verify.Verifier, "production", offline):
        return type(kernels_verify.verify_variant(variant)).__name__


def test_private_signed_variants_every_kind_matches_the_reference(kernel_builder, kernelhub_bin,
                                                                  private, tmp_path):
    _instance, root = private
    made = _private_variants(kernel_builder, tmp_path / "kernel" / "build", private)
    result = run([kernelhub_bin, "verify-signature", tmp_path / "kernel", "--json",
                  "--trusted-root", root])
    ours = {v["variant"]: v for v in json.loads(result.stdout)["variants"]}
    assert result.returncode == 1
    for name, folder in made.items():
        reference = _reference_private(folder, root)
        assert (name, ours[name]["result"]) == (name, reference)
        assert reference == EXPECTED_PRIVATE[name]
    mismatch = ours["torch29-cxx11-cu126-x86_64-linux"]["violations"]
    assert [v["kind"] for v in mismatch] == ["MissingFile", "HashMismatch", "UnknownFile"]
    # The production root does not know this CA: nothing verifies there.
    production = run([kernelhub_bin, "verify-signature", made["torch29-cxx11-cpu-x86_64-linux"],
                      "--json"])
    assert json.loads(production.stdout)["variants"][0]["result"] == "SignatureVerificationFailure"


def test_private_signed_variants_cli_output_matches_the_reference(kernel_builder, kernelhub_bin,
                                                                  private, tmp_path):
    _instance, root = private
    kernel = tmp_path / "kernel"
    _private_variants(kernel_builder, kernel / "build", private)
    cli = pytest.importorskip("kernels.cli.verify_signature")
    trusted = sigstore_models.TrustedRoot.from_file(str(root))
    offline = classmethod(lambda cls, **_: sigstore_verify.Verifier(trusted_root=trusted))
    args = SimpleNamespace(repo_id="org/kernel", version=1, all_variants=True,
                           filter_unsigned=False, filter_no_digest=False)
    out, code = io.StringIO(), 0
    with mock.patch.object(cli, "select_revision_or_version", lambda *a, **k: "main"), \
            mock.patch.object(cli, "install_kernel_all_variants", lambda *a, **k: kernel / "build"), \
            mock.patch.object(kernels_verify.Verifier, "production", offline), \
            contextlib.redirect_stdout(out):
        try:
            cli.verify_signature(args)
        except SystemExit as exit_:
            code = exit_.code
    ours = run([kernelhub_bin, "verify-signature", kernel, "--trusted-root", root])
    # Reasons sigstore words itself (signature failures, metadata parse errors) are not an
    # interface: those variants compare by their first line. Success and the digest lines are
    # compared whole.
    def normalise(blocks):
        return [b.split("\n")[0] if ("signature verification failed" in b
                                     or "invalid metadata" in b) else b for b in blocks]
    assert normalise(_blocks(ours.stdout)) == normalise(_blocks(out.getvalue()))
    assert "✅ torch29-cxx11-cpu-x86_64-linux: kernel metadata is correctly signed" in ours.stdout
    assert ours.returncode == code == 1
