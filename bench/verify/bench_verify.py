#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times verifying one signed variant: ours (native, no Python crypto) against kernels'
`verify_variant` (sigstore 4.5.1), in one run. See README.md beside this file.

Usage: .venv/bin/python bench/verify/bench_verify.py [--repeat N] [--so-mib M]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = REPO / "tests/data/sigstore-conformance/bundle-verify"
BEACON = ("https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
          ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main")
REPO_ID = "sigstore-conformance/extremely-dangerous-public-oidc-beacon"


def best(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result, statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--so-mib", type=int, default=64,
                        help="size of the variant's library for the digest leg")
    parser.add_argument("--binary", default=str(REPO / ".venv/bin/kernelhub"))
    args = parser.parse_args()

    from kernelhub import _kernelhub
    import kernels.verify as kernels_verify
    from kernels._rust import Digest, DigestAlgorithm
    from sigstore.verify import Verifier

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        # Leg 1, the signature: a real Sigstore bundle (Fulcio chain, SCT, Rekor proof,
        # checkpoint, SET, identity, signature). Its artifact is a.txt, so both sides stop at
        # the metadata step right after the whole signature check.
        signed = scratch / "torch-cpu"
        signed.mkdir()
        shutil.copy(CONFORMANCE / "a.txt", signed / "metadata.json")
        shutil.copy(CONFORMANCE / "happy-path-v0.3/bundle.sigstore.json",
                    signed / "metadata.json.sigstore")
        # kernels calls Verifier.production() on every verify_variant: a TUF refresh over the
        # network, then the trusted root read and its keyrings built. The network part is left
        # out here (offline=True reads the same root from sigstore's cache), so the reference
        # is timed doing less than it does in real use.
        production = Verifier.production
        offline = classmethod(lambda cls, **_: production(offline=True))
        policy = [kernels_verify.GitHubWorkflowPolicy(repo_id=REPO_ID, signer_uris=[BEACON])]

        def reference_signature():
            with mock.patch.object(kernels_verify.Verifier, "production", offline):
                return type(kernels_verify.verify_variant(signed, policy)).__name__

        def ours_signature():
            return _kernelhub.verify_signed_variant(signed, [(REPO_ID, [BEACON])])[0]

        # Leg 2, the digest: a variant with a library of --so-mib MiB and a few Python files.
        variant = scratch / "build" / "torch29-cxx11-cpu-x86_64-linux"
        (variant / "relu").mkdir(parents=True)
        (variant / "relu" / "_relu.abi3.so").write_bytes(os.urandom(args.so_mib << 20))
        for name in ("__init__.py", "_ops.py", "layers.py"):
            (variant / "relu" / name).write_text("x = 1\n" * 200)
        (variant / "metadata.json").write_text(json.dumps(
            {"id": "_relu_cpu_bench", "name": "relu", "version": 1, "license": "apache-2.0",
             "python-depends": [], "backend": {"type": "cpu"}}))
        # The digest goes in as kernel-builder writes it (the reference's `hash` does the same).
        subprocess.run([str(Path(args.binary).with_name("kernel-builder")), "hash", "--write",
                        str(variant)], check=True, capture_output=True)
        expected = Digest.hash_variant(DigestAlgorithm.SHA256, variant)

        def reference_digest():
            # What verify_variant does after the signature: rehash, then compare.
            expected.validate(Digest.hash_variant(DigestAlgorithm.SHA256, variant))
            return "ok"

        def ours_digest():
            return subprocess.run([args.binary, "verify", str(variant), "--json"],
                                  capture_output=True, check=True).returncode

        cold_reference = (
            "import sys\nfrom pathlib import Path\nfrom unittest import mock\n"
            "import kernels.verify as kv\nfrom sigstore.verify import Verifier\n"
            "production = Verifier.production\n"
            "with mock.patch.object(kv.Verifier, 'production',"
            " classmethod(lambda cls, **_: production(offline=True))):\n"
            f"    r = kv.verify_variant(Path({str(signed)!r}),"
            f" [kv.GitHubWorkflowPolicy(repo_id={REPO_ID!r}, signer_uris=[{BEACON!r}])])\n"
            "print(type(r).__name__)\n")

        def reference_process():
            return subprocess.run([sys.executable, "-c", cold_reference], capture_output=True,
                                  text=True, check=True).stdout.strip()

        def ours_process():
            out = subprocess.run([args.binary, "verify-signature", str(signed), "--json",
                                  "--signer-workflow", BEACON], capture_output=True, text=True)
            return json.loads(out.stdout)["variants"][0]["result"]

        reference_digest()  # warm the page cache
        rows = [
            ("signature", "reference", *best(reference_signature, args.repeat)),
            ("signature", "ours", *best(ours_signature, args.repeat)),
            ("digest", "reference", *best(reference_digest, args.repeat)),
            ("digest", "ours", *best(ours_digest, args.repeat)),
            ("process", "reference", *best(reference_process, max(3, args.repeat // 4))),
            ("process", "ours", *best(ours_process, max(3, args.repeat // 4))),
        ]
    print(f"repeat {args.repeat}, variant library {args.so_mib} MiB")
    for leg, who, fastest, result, median in rows:
        print(f"{leg:10s} {who:10s} best {fastest * 1e3:9.2f} ms  median {median * 1e3:9.2f} ms"
              f"  ({result})")
    by = {(leg, who): fastest for leg, who, fastest, _, _ in rows}
    print(f"signature ratio (reference/ours): "
          f"{by[('signature', 'reference')] / by[('signature', 'ours')]:.1f}x")
    print(f"digest ratio (reference in-process / ours as a whole process): "
          f"{by[('digest', 'reference')] / by[('digest', 'ours')]:.2f}x")
    print(f"process ratio (a fresh interpreter's verify_variant / a kernelhub verify-signature "
          f"process): {by[('process', 'reference')] / by[('process', 'ours')]:.1f}x")
    total_ref = by[("signature", "reference")] + by[("digest", "reference")]
    total_ours = by[("signature", "ours")] + by[("digest", "ours")]
    print(f"one signed variant (sum of legs): reference {total_ref * 1e3:.1f} ms, "
          f"ours {total_ours * 1e3:.1f} ms, {total_ref / total_ours:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
