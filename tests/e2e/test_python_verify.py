# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.verify` against `kernels.verify`, call for call on the same variant folders: the
result kind of verify_variant (the signed cases are in test_verify_signature.py, through the
same native verifier) and GitHubWorkflowPolicy's argument check."""

import json
import subprocess
import sys
import textwrap

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
