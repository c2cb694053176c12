# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.data` against the reference's `kernels._rust` (the kernels-data types kernels
0.17.2 ships), call for call on the same inputs: values, texts, errors, JSON."""
import json
import shutil
from pathlib import Path

import pytest

from kernelhub import data

from conftest import CORPUS_DIR

kernels_rust = pytest.importorskip("kernels._rust")


def outcome(call, *args):
    """("ok", value) or the exception's class name: both sides must agree on either."""
    try:
        return ("ok", call(*args))
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return (type(error).__name__,)


VERSIONS = ["12.8.0", "1", "1.2.3", " 2.10 ", "+1.02", "0.17.0.1", "0.17", "007", "abc", "",
            "1..2", "1.-2", "1.2a", "2.10.0.0"]


@pytest.mark.parametrize("text", VERSIONS)
def test_version_text_and_errors(text):
    def show(module):
        version = module.Version.from_str(text)
        return str(version), repr(version)
    assert outcome(show, data) == outcome(show, kernels_rust)


def test_version_order_and_hash():
    good = [t for t in VERSIONS if outcome(kernels_rust.Version.from_str, t)[0] == "ok"]

    def table(module):
        parsed = [module.Version.from_str(t) for t in good]
        return [[a == b, a < b, a <= b, a > b, a >= b, hash(a) == hash(b)]
                for a in parsed for b in parsed]
    assert table(data) == table(kernels_rust)


@pytest.mark.parametrize("name", ["my-kernel", "a1", "flash-attention", "My-Kernel", "1kernel",
                                  "-kernel", "kernel-", "a", "a_b", ""])
def test_kernel_name(name):
    def show(module):
        value = module.KernelName(name)
        return str(value), repr(value), value.python_name, value == module.KernelName(name)
    assert outcome(show, data) == outcome(show, kernels_rust)


@pytest.mark.parametrize("text", ["cuda", "CUDA", "Metal", "rocm", "ROCM", "cann", "tpu", "xpu",
                                  "neuron", "cpu", "dsp", ""])
def test_backend(text):
    def show(module):
        backend = module.Backend.from_str(text)
        return str(backend), repr(backend), backend == module.Backend.from_str(text.upper())
    assert outcome(show, data) == outcome(show, kernels_rust)


def test_backend_members():
    names = ["CANN", "CPU", "CUDA", "Metal", "Neuron", "ROCm", "TPU", "XPU"]

    def show(module):
        return [(str(getattr(module.Backend, n)), repr(getattr(module.Backend, n)),
                 hash(getattr(module.Backend, n)) == hash(getattr(module.Backend, n)))
                for n in names]
    assert show(data) == show(kernels_rust)


BASE = {"id": "_my_kernel_8a3be8f", "name": "my-kernel", "version": 1, "license": "Apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"}}
METADATA = {
    "minimal": BASE,
    "full": dict(BASE, **{
        "kernels-minver": "0.17.0", "upstream": "https://github.com/example/kernel",
        "source": "git@github.com:example/kernel-builder.git", "python-depends": ["einops"],
        "backend": {"type": "cuda", "archs": ["9.0", "10.0a"]},
        "kernel-depends": [{"repo-id": "org/a", "version": 2}, {"repo-id": "org/b",
                                                                "revision": "main"}],
        "digest": {"algorithm": "sha512", "files": {"b.py": "Yg==", "a.so": "YQ=="}},
        "provenance": {"kernel-builder": {"version": "0.1.0", "commit": "a" * 40,
                                          "dirty": True},
                       "kernel": {"commit": "B" * 40, "dirty": False}}}),
    "unknown-key": dict(BASE, surprise=1),
    "cann": dict(BASE, backend={"type": "cann"}),
    "no-id": {k: v for k, v in BASE.items() if k != "id"},
    "bad-backend": dict(BASE, backend={"type": "dsp"}),
    "bad-name": dict(BASE, name="My-Kernel"),
    "bad-minver": dict(BASE, **{"kernels-minver": "x.y"}),
}


def metadata_view(metadata):
    provenance = metadata.provenance
    digest = metadata.digest
    return {
        "id": metadata.id, "name": str(metadata.name), "version": metadata.version,
        "kernels_minver": str(metadata.kernels_minver), "license": metadata.license,
        "upstream": metadata.upstream, "source": metadata.source,
        "python_depends": metadata.python_depends,
        "kernel_depends": [repr(d) for d in metadata.kernel_depends],
        "backend": (repr(metadata.backend.backend_type), metadata.backend.archs),
        "digest": None if digest is None else (str(digest.algorithm), digest.files),
        "provenance": None if provenance is None else (
            provenance.dirty, provenance.kernel_builder.version,
            repr(provenance.kernel_builder.git), repr(provenance.kernel)),
    }


@pytest.mark.parametrize("case", sorted(METADATA))
def test_metadata(case, tmp_path):
    text = json.dumps(METADATA[case])
    path = tmp_path / "metadata.json"
    path.write_text(text)
    for read in (lambda m: m.Metadata.from_bytes(text.encode()),
                 lambda m: m.Metadata.read_from_file(path)):
        assert outcome(lambda m: metadata_view(read(m)), data) == \
            outcome(lambda m: metadata_view(read(m)), kernels_rust)


def test_metadata_errors(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    for module in (data, kernels_rust):
        with pytest.raises(OSError):
            module.Metadata.read_from_file(tmp_path / "missing.json")
        with pytest.raises(ValueError):
            module.Metadata.read_from_file(tmp_path / "bad.json")


def _kind(module, violation) -> str:
    for kind in ("MissingFile", "UnknownFile", "HashMismatch", "AlgorithmMismatch"):
        if isinstance(violation, getattr(module.DigestViolation, kind)):
            return kind
    return type(violation).__name__


def test_digest_hash_and_validate(tmp_path):
    expected, actual = tmp_path / "expected", tmp_path / "actual"
    for folder, files in ((expected, {"shared.so": b"original", "gone.py": b"x",
                                      "sub/dir/m.py": b"y", "metadata.json": b"{}",
                                      "c.pyc": b"z", "__pycache__/m.pyc": b"z"}),
                          (actual, {"shared.so": b"tampered", "extra.bin": b"x",
                                    "sub/dir/m.py": b"y"})):
        for name, content in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content)

    def show(module):
        out = {}
        for algorithm in (module.DigestAlgorithm.SHA256, module.DigestAlgorithm.SHA512):
            ref = module.Digest.hash_variant(algorithm, expected)
            got = module.Digest.hash_variant(algorithm, str(actual))
            try:
                ref.validate(got)
                violations = None
            except module.DigestValidationError as error:
                violations = sorted((_kind(module, v), str(v)) for v in error.violations)
            out[str(algorithm)] = (ref.files, got.files, violations)
        mixed = module.Digest.hash_variant(module.DigestAlgorithm.SHA256, expected)
        try:
            mixed.validate(module.Digest.hash_variant(module.DigestAlgorithm.SHA512, expected))
        except module.DigestValidationError as error:
            out["mixed"] = [(_kind(module, v), str(v)) for v in error.violations]
        return out
    assert show(data) == show(kernels_rust)


COMMIT = "d649efb56fb249ac8f7a57fa1866728ad0c60e52"


def test_locks_json_and_mapping():
    def show(module):
        dep = module.KernelDependency
        version = module.KernelVersion
        deps = [dep(repo_id="org/b", version=version.Version(2)),
                dep(repo_id="org/a", version=version.Revision("main")),
                dep(repo_id="org/a", version=version.Version(1))]
        locks = module.KernelLocks({d: module.KernelLock(COMMIT.upper()) for d in deps})
        nix = module.NixKernelLocks({d: module.NixKernelLock(COMMIT, "sha256-x") for d in deps})
        paths = module.KernelPaths({d: f"/k/{i}" for i, d in enumerate(deps)})
        return {
            "locks": locks.to_json(), "nix": nix.to_json(), "paths": paths.to_json(),
            "lock": module.KernelLock(COMMIT).to_json(),
            "keys": [repr(k) for k in locks.keys()],
            "roundtrip": module.KernelLocks.from_json(locks.to_json()) == locks,
            "nix_roundtrip": module.NixKernelLocks.from_json(nix.to_json()) == nix,
            "paths_roundtrip": module.KernelPaths.from_json(paths.to_json()) == paths,
            "short": outcome(module.KernelLock, "d649efb"),
            "bad_json": outcome(module.KernelLocks.from_json, "{not json"),
            "nix_no_hash": outcome(module.NixKernelLocks.from_json, json.dumps(
                [{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": COMMIT}}])),
            "duplicate": outcome(module.KernelLocks.from_json, json.dumps(
                [{"dependency": {"repo-id": "a/b", "version": 1},
                  "lock": {"commit": COMMIT}}] * 2)),
        }
    assert show(data) == show(kernels_rust)


def build_toml_cases():
    return sorted(CORPUS_DIR.glob("*.toml"))


@pytest.mark.parametrize("source", build_toml_cases(), ids=lambda p: p.name)
def test_build_open_on_the_corpus(source, tmp_path):
    shutil.copy(source, tmp_path / "build.toml")
    reference = outcome(kernels_rust.Build.open, tmp_path)
    if reference[0] != "ok":
        pytest.skip("the reference does not read this edition (kernelhub reads editions 1-5)")

    def show(module):
        build = module.Build.open(tmp_path)
        return ([str(b) for b in build.general.backends],
                {str(b): [repr(d) for d in build.all_kernel_depends(b)]
                 for b in build.general.backends})
    assert show(data) == show(kernels_rust)


def test_build_open_missing(tmp_path):
    assert outcome(data.Build.open, tmp_path) == outcome(kernels_rust.Build.open, tmp_path)
    assert Path(tmp_path).exists()
