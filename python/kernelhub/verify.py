# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.verify`: kernels.verify's API (`verify_variant`, `VerificationResult`,
`GitHubWorkflowPolicy`, `DEFAULT_POLICIES`) over the C++ Sigstore verifier (the `verify`
layer): no network; the production trusted root is compiled in. With the default policies or
GitHubWorkflowPolicy objects, no Python sigstore either; any other sigstore
`VerificationPolicy` (`Identity`, `AllOf`, ...) is called from the core's policy step, as
sigstore's verifier calls it, on a `cryptography` certificate."""

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, final

from . import _kernelhub


def _verification_error() -> type[Exception]:
    """sigstore's VerificationError: what a policy raises to refuse a certificate."""
    try:
        from sigstore.errors import VerificationError
    except ImportError:  # without sigstore only our own policies exist, and they use this
        return _PolicyRefused
    return VerificationError


class _PolicyRefused(Exception):
    pass


class GitHubWorkflowPolicy:
    """Accepts a signature made by a workflow of the GitHub repository `repo_id` whose URI is
    one of `signer_uris` (`https://github.com/<org>/<repo>/.github/workflows/<f>.yaml@<ref>`),
    through GitHub's OIDC issuer. A sigstore `VerificationPolicy`: `verify(cert)` raises
    sigstore's VerificationError for a certificate it refuses."""

    def __init__(self, *, repo_id: str, signer_uris: list[str]):
        if not signer_uris:
            raise ValueError("At least one signer URI must be provided")
        self.repo_id = repo_id
        self.signer_uris = signer_uris

    def verify(self, cert) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding

        problem = _kernelhub.check_workflow_policy(cert.public_bytes(Encoding.DER), self.repo_id,
                                                   list(self.signer_uris))
        if problem is not None:
            raise _verification_error()(problem)


_COMMUNITY = "huggingface/kernels-community"
DEFAULT_POLICIES = [GitHubWorkflowPolicy(
    repo_id=_COMMUNITY,
    signer_uris=[f"https://github.com/{_COMMUNITY}/.github/workflows/{workflow}@refs/heads/main"
                 for workflow in ("build.yaml", "build-mac.yaml", "build-windows.yaml",
                                  "sign-old-builds.yaml")])]


@dataclass(frozen=True)
class DigestViolation:
    """One file that differs from the digest: `kind` is MissingFile, UnknownFile, HashMismatch or
    AlgorithmMismatch; str() is the reference's text."""

    kind: str
    path: str
    expected: str
    got: str
    text: str

    def __str__(self) -> str:
        return self.text


class VerificationResult:
    @final
    @dataclass
    class DigestVerificationFailure:
        violations: list[DigestViolation]

    @final
    @dataclass
    class MetadataInvalid:
        reason: str

    @final
    @dataclass
    class SignatureBundleInvalid:
        reason: str

    @final
    @dataclass
    class SignatureVerificationFailure:
        reason: str

    @final
    @dataclass
    class DigestMissing:
        pass

    @final
    @dataclass
    class MetadataMissing:
        pass

    @final
    @dataclass
    class SignatureBundleMissing:
        pass

    @final
    @dataclass
    class Success:
        pass

    Any: TypeAlias = (DigestMissing | DigestVerificationFailure | MetadataInvalid | MetadataMissing
                      | SignatureBundleInvalid | SignatureBundleMissing
                      | SignatureVerificationFailure | Success)


_WITH_REASON = {"MetadataInvalid", "SignatureBundleInvalid", "SignatureVerificationFailure"}


def _any_of(policies: list):
    """sigstore's `AnyOf(policies)` as the core's identity check: called with the signing
    certificate's DER, None when a policy accepts it, else the reason. A policy's own exception
    other than VerificationError propagates, as it does out of kernels."""

    def check(der: bytes) -> str | None:
        from cryptography import x509

        cert = x509.load_der_x509_certificate(der)
        refused = _verification_error()
        for policy in policies:
            try:
                policy.verify(cert)
            except refused:
                continue
            return None
        return f"0 of {len(policies)} policies succeeded"

    return check


def verify_variant(variant_path: Path, policies: list | None = None) -> VerificationResult.Any:
    """Verifies a variant folder: the Sigstore bundle `metadata.json.sigstore` over the exact
    bytes of `metadata.json` (against `policies`, default DEFAULT_POLICIES: any sigstore
    `VerificationPolicy`, any of which must accept the signer), then every file against the
    digest in the metadata, in kernels' order of checks and with its result kinds."""
    if policies is None or all(type(p) is GitHubWorkflowPolicy for p in policies):
        # Checked natively, without Python sigstore or cryptography.
        pairs = None if policies is None else [(p.repo_id, list(p.signer_uris)) for p in policies]
        kind, reason, violations = _kernelhub.verify_signed_variant(Path(variant_path), pairs)
    else:
        kind, reason, violations = _kernelhub.verify_signed_variant(
            Path(variant_path), identity_check=_any_of(list(policies)))
    result_class = getattr(VerificationResult, kind)
    if kind == "DigestVerificationFailure":
        return result_class(violations=[DigestViolation(*v) for v in violations])
    if kind in _WITH_REASON:
        return result_class(reason=reason)
    return result_class()
