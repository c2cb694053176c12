# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.verify`: kernels.verify's API (`verify_variant`, `VerificationResult`,
`GitHubWorkflowPolicy`, `DEFAULT_POLICIES`) over the C++ Sigstore verifier (the `verify`
layer): no Python sigstore, no network; the production trusted root is compiled in."""

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, final

from . import _kernelhub


class GitHubWorkflowPolicy:
    """Accepts a signature made by a workflow of the GitHub repository `repo_id` whose URI is
    one of `signer_uris` (`https://github.com/<org>/<repo>/.github/workflows/<f>.yaml@<ref>`),
    through GitHub's OIDC issuer."""

    def __init__(self, *, repo_id: str, signer_uris: list[str]):
        if not signer_uris:
            raise ValueError("At least one signer URI must be provided")
        self.repo_id = repo_id
        self.signer_uris = signer_uris


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


def verify_variant(variant_path: Path, policies: list | None = None) -> VerificationResult.Any:
    """Verifies a variant folder: the Sigstore bundle `metadata.json.sigstore` over the exact
    bytes of `metadata.json` (against `policies`, default DEFAULT_POLICIES), then every file
    against the digest in the metadata, in kernels' order of checks and with its result kinds."""
    pairs = None if policies is None else [(p.repo_id, list(p.signer_uris)) for p in policies]
    kind, reason, violations = _kernelhub.verify_signed_variant(Path(variant_path), pairs)
    result_class = getattr(VerificationResult, kind)
    if kind == "DigestVerificationFailure":
        return result_class(violations=[DigestViolation(*v) for v in violations])
    if kind in _WITH_REASON:
        return result_class(reason=reason)
    return result_class()
