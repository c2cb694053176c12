#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes data/sigstore/trusted_root.json from the `sigstore` package's embedded copy.

The verify layer compiles this file in (src/kernelhub/verify/CMakeLists.txt), so a native
verification needs no TUF refresh and no network: the reference (kernels 0.17.2) refreshes the
root online on every call. Rerun this after upgrading `sigstore` in requirements-dev.txt, when
the public-good instance adds a log shard, CA or TSA key.

Usage: .venv/bin/python scripts/generate_sigstore_trusted_root.py [--check]
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

import sigstore

k_store = "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"
k_media_type = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args()

    source = Path(sigstore.__file__).parent / "_store" / k_store / "trusted_root.json"
    raw = source.read_bytes()
    # Refuse a root the verifier would not accept rather than ship it.
    document = json.loads(raw)
    if document.get("mediaType") != k_media_type:
        print(f"unexpected media type {document.get('mediaType')!r} in {source}", file=sys.stderr)
        return 1
    for section in ("tlogs", "certificateAuthorities", "ctlogs"):
        if not document.get(section):
            print(f"no {section} in {source}", file=sys.stderr)
            return 1

    target = Path(__file__).resolve().parent.parent / "data" / "sigstore" / "trusted_root.json"
    # Byte for byte: the bytes are what sigstore trusts, and a diff then shows a real change.
    if args.check:
        if not target.is_file() or target.read_bytes() != raw:
            print(f"{target} is out of date; rerun {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(raw)
    print(f"wrote {target} (sigstore {sigstore.__version__}, sha256 "
          f"{hashlib.sha256(raw).hexdigest()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
