# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.verify` against `kernels.verify`, call for call on the same variant folders: the
result kind of verify_variant (the signed cases are in test_verify_signature.py, through the
same native verifier) and GitHubWorkflowPolicy's argument check."""

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    verify = __import__(sys.argv[1] + ".verify", fromlist=["verify"])
    out = {}
    for variant in sorted(Path(sys.argv[2]).iterdir()):
        result = verify.verify_variant(variant)
        out[variant.name] = type(result).__name__
    try:
        verify.GitHubWorkflowPolicy(repo_id="org/repo", signer_uris=[])
    except ValueError as error:
        out["empty_policy"] = str(error)
    out["default_repos"] = sorted(p.repo_id for p in verify.DEFAULT_POLICIES)
    print(json.dumps(out, sort_keys=True))
""")

METADATA = {"name": "relu", "id": "_relu_cpu_0000000", "version": 1, "license": "mit",
            "python-depends": [], "backend": {"type": "cpu"}}


def make_variant(root, name, *, metadata=True, bundle=None):
    variant = root / name
    variant.mkdir()
    (variant / "__init__.py").write_text("x = 1\n")
    if metadata:
        (variant / "metadata.json").write_text(json.dumps(METADATA))
    if bundle is not None:
        (variant / "metadata.json.sigstore").write_text(bundle)


def test_verify_variant_kinds_match_kernels(tmp_path):
    make_variant(tmp_path, "unsigned")
    make_variant(tmp_path, "bundle-not-json", bundle="{not json")
    make_variant(tmp_path, "bundle-empty", bundle="{}")
    make_variant(tmp_path, "no-metadata", metadata=False, bundle="{}")
    results = {}
    for package in ("kernels", "kernelhub"):
        result = subprocess.run([sys.executable, "-c", SCRIPT, package, str(tmp_path)],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        results[package] = json.loads(result.stdout.strip().splitlines()[-1])
    assert results["kernelhub"] == results["kernels"]
    assert results["kernels"]["unsigned"] == "SignatureBundleMissing"
    assert results["kernels"]["bundle-not-json"] == "SignatureBundleInvalid"


# --- verify_variant with the caller's sigstore policies (issue 21) ----------------------------
#
# kernels passes `policies` to sigstore as `AnyOf(policies)`, so any sigstore VerificationPolicy
# works there (Identity, OIDCIssuer, AllOf, UnsafeNoOp, its own GitHubWorkflowPolicy, or any
# object with `verify(cert)`). Both packages verify the same folders with the same policies
# against a private Sigstore instance's trusted root (private_sigstore.py): the reference through
# its `Verifier.production`, ours through the core's `trusted_root` argument.

POLICY_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from unittest import mock
    from sigstore.verify import policy
    package, folders, root = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    verify = __import__(package + ".verify", fromlist=["verify"])
    if package == "kernels":
        from sigstore.models import TrustedRoot
        from sigstore.verify import Verifier
        trusted = TrustedRoot.from_file(root)
        mock.patch.object(verify.Verifier, "production",
                          classmethod(lambda cls, **_: Verifier(trusted_root=trusted))).start()
    else:
        core = verify._kernelhub

        class Core:
            def __getattr__(self, name):
                return getattr(core, name)

            def verify_signed_variant(self, *args, **kwargs):
                return core.verify_signed_variant(*args, trusted_root=root, **kwargs)

        verify._kernelhub = Core()

    class Broken:
        def verify(self, cert):
            raise KeyError("policy bug")

    community = ("https://github.com/huggingface/kernels-community/.github/workflows/"
                 "build.yaml@refs/heads/main")
    github = "https://token.actions.githubusercontent.com"
    policies = {
        "identity": [policy.Identity(identity=community, issuer=github)],
        "identity-other": [policy.Identity(identity="https://example.com/x", issuer=github)],
        "issuer": [policy.OIDCIssuer(github)],
        "all-of": [policy.AllOf([policy.OIDCIssuer(github),
                                 policy.OIDCBuildSignerURI(community)])],
        "no-op": [policy.UnsafeNoOp()],
        "none-of-two": [policy.OIDCIssuer("https://other.example"),
                        policy.Identity(identity="https://example.com/x", issuer=github)],
        "workflow-then-identity": [
            verify.GitHubWorkflowPolicy(repo_id="other/repo",
                                        signer_uris=["https://github.com/other/repo/x@y"]),
            policy.Identity(identity=community, issuer=github)],
        "any-of-workflow": [policy.AnyOf([verify.GitHubWorkflowPolicy(
            repo_id="huggingface/kernels-community", signer_uris=[community])])],
        "broken": [Broken()],
        "empty": [],
    }
    out = {}
    for folder in sorted(folders.iterdir()):
        for name, chosen in policies.items():
            try:
                result = verify.verify_variant(folder, chosen)
                reason = getattr(result, "reason", None)
                if type(result).__name__ == "SignatureBundleInvalid":
                    reason = "<the bundle parser's text>"
                out[f"{folder.name} {name}"] = [type(result).__name__, reason]
            except Exception as error:
                out[f"{folder.name} {name}"] = ["raised", type(error).__name__, str(error)]
    print(json.dumps(out, sort_keys=True))
""")

COMMUNITY = ("https://github.com/huggingface/kernels-community/.github/workflows/"
             "build.yaml@refs/heads/main")


def test_verify_variant_takes_any_sigstore_policy_like_kernels(tmp_path):
    pytest.importorskip("sigstore.verify.policy")
    private_sigstore = pytest.importorskip("private_sigstore")
    instance = private_sigstore.PrivateSigstore()
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    folders = tmp_path / "variants"
    folders.mkdir()
    make_variant(folders, "unsigned")
    make_variant(folders, "not-a-bundle", bundle=json.dumps({"not": "a bundle"}))
    metadata = json.dumps(METADATA).encode()
    make_variant(folders, "signed-by-community",
                 bundle=instance.sign(metadata, COMMUNITY).decode())
    make_variant(folders, "signed-by-another-workflow",
                 bundle=instance.sign(metadata, COMMUNITY.replace("build.yaml", "evil.yaml"))
                 .decode())
    results = {}
    for package in ("kernels", "kernelhub"):
        result = subprocess.run([sys.executable, "-c", POLICY_SCRIPT, package, str(folders),
                                 str(root)], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        results[package] = json.loads(result.stdout.strip().splitlines()[-1])
    ours, reference = results["kernelhub"], results["kernels"]
    mismatches = {key: (ours.get(key), value) for key, value in reference.items()
                  if ours.get(key) != value}
    assert not mismatches, mismatches
    assert ours.keys() == reference.keys()
    # What the comparison covered: the two folders, an accepting and a refusing
    # policy, and a policy's own exception.
    assert reference["unsigned identity"] == ["SignatureBundleMissing", None]
    assert reference["not-a-bundle identity"][0] == "SignatureBundleInvalid"
    assert reference["signed-by-community identity"] == ["DigestMissing", None]
    assert reference["signed-by-another-workflow identity"] == [
        "SignatureVerificationFailure", "0 of 1 policies succeeded"]
    assert reference["signed-by-community workflow-then-identity"] == ["DigestMissing", None]
    assert reference["signed-by-community broken"] == ["raised", "KeyError", "'policy bug'"]
