# SPDX-License-Identifier: Apache-2.0
"""A private Sigstore instance made at test time: a Fulcio-like CA (P-384 root and
intermediate), a CT log and a Rekor log (P-256), its trusted_root.json, and a signer that
writes real Sigstore bundles (v0.3, hashedrekord 0.0.1 entry with an inclusion proof, a signed
checkpoint and a signed entry timestamp, a leaf with GitHub Actions' Fulcio extensions and an
embedded SCT) over any bytes.

No public instance will sign a kernels-community identity for a test, and the conformance
bundles all sign `a.txt`; with this the differential tests reach Success and the digest kinds,
with the reference (sigstore 4.5.1) and ours verifying the same bytes against the same root.
"""
import base64
import datetime
import hashlib
import json
import os
import struct
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
FULCIO = "1.3.6.1.4.1.57264.1."
SCT_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def _der_utf8(text: str) -> bytes:
    raw = text.encode()
    if len(raw) < 0x80:
        length = bytes([len(raw)])
    elif len(raw) < 0x100:
        length = bytes([0x81, len(raw)])
    else:
        length = bytes([0x82]) + struct.pack(">H", len(raw))
    return b"\x0c" + length + raw


def _der_octets(raw: bytes) -> bytes:
    if len(raw) < 0x80:
        return b"\x04" + bytes([len(raw)]) + raw
    if len(raw) < 0x100:
        return b"\x04\x81" + bytes([len(raw)]) + raw
    return b"\x04\x82" + struct.pack(">H", len(raw)) + raw


def _time(seconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)


def _rfc3339(seconds: int) -> str:
    return _time(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


class PrivateSigstore:
    def __init__(self, start: int = 1_700_000_000):
        self.start = start
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        self.intermediate_key = ec.generate_private_key(ec.SECP384R1())
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.rekor_key = ec.generate_private_key(ec.SECP256R1())
        # As Rekor v1: the origin carries the tree id, the signature line only the name.
        self.name = "rekor.test"
        self.origin = "rekor.test - 1"
        root_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kernelhub-test"),
                               x509.NameAttribute(NameOID.COMMON_NAME, "test-root")])
        inter_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kernelhub-test"),
                                x509.NameAttribute(NameOID.COMMON_NAME, "test-intermediate")])
        self.root = self._ca(root_name, root_name, self.root_key, self.root_key, None)
        self.intermediate = self._ca(inter_name, root_name, self.intermediate_key,
                                     self.root_key, 0)

    def _ca(self, subject, issuer, key, signer, path_length):
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(_time(self.start - 86400))
                   .not_valid_after(_time(self.start + 10 * 365 * 86400))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), True)
                   .add_extension(x509.KeyUsage(False, False, False, False, False, True, True,
                                                False, False), True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                                  False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                       signer.public_key()), False))
        return builder.sign(signer, hashes.SHA384())

    def trusted_root(self) -> dict:
        def log(base_url, key):
            return {"baseUrl": base_url, "hashAlgorithm": "SHA2_256",
                    "publicKey": {"rawBytes": _b64(_spki(key)),
                                  "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                  "validFor": {"start": _rfc3339(self.start - 86400)}},
                    "logId": {"keyId": _b64(hashlib.sha256(_spki(key)).digest())}}

        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log("https://rekor.test", self.rekor_key)],
            "certificateAuthorities": [{
                "subject": {"organization": "kernelhub-test", "commonName": "test"},
                "uri": "https://fulcio.test",
                "certChain": {"certificates": [
                    {"rawBytes": _b64(c.public_bytes(serialization.Encoding.DER))}
                    for c in (self.intermediate, self.root)]},
                "validFor": {"start": _rfc3339(self.start - 86400)}}],
            "ctlogs": [log("https://ctfe.test", self.ct_key)],
            "timestampAuthorities": [],
        }

    def write_trusted_root(self, path: Path) -> Path:
        path.write_text(json.dumps(self.trusted_root(), indent=2))
        return path

    def _leaf(self, key, identity: str, repository: str, not_before: int, ct_key=None):
        ct_key = ct_key or self.ct_key

        def builder():
            return (x509.CertificateBuilder().subject_name(x509.Name([]))
                    .issuer_name(self.intermediate.subject).public_key(key.public_key())
                    .serial_number(serial).not_valid_before(_time(not_before))
                    .not_valid_after(_time(not_before + 600))
                    .add_extension(x509.KeyUsage(True, False, False, False, False, False, False,
                                                 False, False), True)
                    .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]),
                                   False)
                    .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                                   False)
                    .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                        self.intermediate_key.public_key()), False)
                    .add_extension(x509.SubjectAlternativeName(
                        [x509.UniformResourceIdentifier(identity)]), True)
                    .add_extension(x509.UnrecognizedExtension(
                        x509.ObjectIdentifier(FULCIO + "1"), GITHUB_ISSUER.encode()), False)
                    .add_extension(x509.UnrecognizedExtension(
                        x509.ObjectIdentifier(FULCIO + "8"), _der_utf8(GITHUB_ISSUER)), False)
                    .add_extension(x509.UnrecognizedExtension(
                        x509.ObjectIdentifier(FULCIO + "9"), _der_utf8(identity)), False)
                    .add_extension(x509.UnrecognizedExtension(
                        x509.ObjectIdentifier(FULCIO + "12"),
                        _der_utf8("https://github.com/" + repository)), False))

        serial = x509.random_serial_number()
        precert = builder().sign(self.intermediate_key, hashes.SHA384())
        tbs = precert.tbs_certificate_bytes
        timestamp_ms = (not_before + 1) * 1000
        issuer_key_hash = hashlib.sha256(_spki(self.intermediate_key)).digest()
        signed = (b"\x00\x00" + struct.pack(">Q", timestamp_ms) + b"\x00\x01" + issuer_key_hash
                  + struct.pack(">I", len(tbs))[1:] + tbs + b"\x00\x00")
        signature = ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        sct = (b"\x00" + hashlib.sha256(_spki(ct_key)).digest() + struct.pack(">Q", timestamp_ms)
               + b"\x00\x00" + b"\x04\x03" + struct.pack(">H", len(signature)) + signature)
        sct_list = struct.pack(">H", len(sct) + 2) + struct.pack(">H", len(sct)) + sct
        return builder().add_extension(
            x509.UnrecognizedExtension(SCT_OID, _der_octets(sct_list)), False
        ).sign(self.intermediate_key, hashes.SHA384())

    def sign(self, artifact: bytes, identity: str, *, integrated_offset: int = 30,
             ct_key=None) -> bytes:
        """A bundle over `artifact` by the GitHub workflow `identity`
        (https://github.com/ORG/REPO/.github/workflows/FILE@REF)."""
        repository = identity[len("https://github.com/"):].split("/.github/")[0]
        key = ec.generate_private_key(ec.SECP256R1())
        not_before = self.start
        leaf = self._leaf(key, identity, repository, not_before, ct_key)
        leaf_der = leaf.public_bytes(serialization.Encoding.DER)
        digest = hashlib.sha256(artifact).digest()
        signature = key.sign(artifact, ec.ECDSA(hashes.SHA256()))
        pem = leaf.public_bytes(serialization.Encoding.PEM)
        body = json.dumps({"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
            "signature": {"content": _b64(signature), "publicKey": {"content": _b64(pem)}}}},
            sort_keys=True, separators=(",", ":")).encode()
        # A tree of two leaves, ours first: the proof is the other leaf's hash.
        leaf_hash = hashlib.sha256(b"\x00" + body).digest()
        sibling = hashlib.sha256(b"\x00" + os.urandom(16)).digest()
        root_hash = hashlib.sha256(b"\x01" + leaf_hash + sibling).digest()
        note = f"{self.origin}\n2\n{_b64(root_hash)}\n"
        log_id = hashlib.sha256(_spki(self.rekor_key)).digest()
        note_signature = self.rekor_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        checkpoint = note + f"\n\u2014 {self.name} {_b64(log_id[:4] + note_signature)}\n"
        integrated = not_before + integrated_offset
        log_index = 7
        promise = json.dumps({"body": _b64(body), "integratedTime": integrated,
                              "logID": log_id.hex(), "logIndex": log_index},
                             sort_keys=True, separators=(",", ":")).encode()
        set_signature = self.rekor_key.sign(promise, ec.ECDSA(hashes.SHA256()))
        bundle = {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(leaf_der)},
                "tlogEntries": [{
                    "logIndex": str(log_index), "logId": {"keyId": _b64(log_id)},
                    "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
                    "integratedTime": str(integrated),
                    "inclusionPromise": {"signedEntryTimestamp": _b64(set_signature)},
                    "inclusionProof": {"logIndex": "0", "rootHash": _b64(root_hash),
                                       "treeSize": "2", "hashes": [_b64(sibling)],
                                       "checkpoint": {"envelope": checkpoint}},
                    "canonicalizedBody": _b64(body)}]},
            "messageSignature": {"messageDigest": {"algorithm": "SHA2_256",
                                                   "digest": _b64(digest)},
                                 "signature": _b64(signature)}}
        return json.dumps(bundle).encode()
