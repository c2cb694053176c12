# SPDX-License-Identifier: Apache-2.0
"""The Hub repositories the reference's tests ask for, made on this machine and published to a
local `kernelhub serve` (both packages load from it; no other address is ever used).

Where sources exist they are built here with our kernel-builder, cpu and (where nvcc is found)
cuda variants, cached under build/refsuite/kernels/ and keyed by the sources, the builder and
the torch version:
`kernels-community/relu` from examples/relu, `kernels-test/relu-tvm-ffi` from
examples/relu-tvm-ffi, `kernels-test/silu-and-mul` from examples/silu-and-mul plus the
`layers.SiluAndMul` the tests map. The rest are test fixtures on the Hub with no published
sources; they are made here to the shape the tests read: the branches (`v1`, `v2`, `v10`,
`pre-flattening`...), the functions and layers the tests call (`version()`, `Version`,
`LinearBackward`, `silu_and_mul`), the metadata they check (license, python-depends), the
variant names they list, and the Sigstore cases of `kernels-test/signatures` (no bundle, a
broken one, one from a private Sigstore that production verification refuses, one without
metadata.json). Variants built for other machines are placeholders (metadata.json and an
`__init__.py` that refuses to import): the tests only list them.

Kernel bodies are plain torch, so every number the tests compare is computed, never written
down.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TRUSTED_ORGS = ("kernels-community", "kernels-test")

# Variant names of kernels-community/relu v1 the reference's test_get_variants requires.
RELU_VARIANTS = [
    f"torch{t}-{rest}" for t in ("210", "211", "212") for rest in (
        "cpu-aarch64-darwin", "cxx11-cpu-aarch64-linux", "cxx11-cpu-x86_64-linux",
        "cxx11-cu126-aarch64-linux", "cxx11-cu126-x86_64-linux", "metal-aarch64-darwin",
        "cxx11-xpu20253-x86_64-linux")
] + [f"torch210-cxx11-{b}" for b in ("cu128-aarch64-linux", "cu128-x86_64-linux",
                                     "cu130-aarch64-linux", "cu130-x86_64-linux",
                                     "rocm70-x86_64-linux", "rocm71-x86_64-linux")] \
  + [f"torch211-cxx11-{b}" for b in ("cu128-aarch64-linux", "cu128-x86_64-linux",
                                     "cu130-aarch64-linux", "cu130-x86_64-linux",
                                     "rocm71-x86_64-linux", "rocm72-x86_64-linux")] \
  + [f"torch212-cxx11-{b}" for b in ("cu130-aarch64-linux", "cu130-x86_64-linux",
                                     "cu132-aarch64-linux", "cu132-x86_64-linux",
                                     "rocm71-x86_64-linux", "rocm72-x86_64-linux")]

Files = dict[str, bytes]


@dataclass
class Repo:
    repo_id: str
    # branch -> files; "main" is committed first, every other branch starts from it
    branches: dict[str, Files] = field(default_factory=dict)


def _json(value) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def _backend_of(variant: str) -> str:
    arch = variant.split("-")
    if variant.startswith("torch-") and len(arch) == 2:
        return "cpu" if arch[1] == "universal" else arch[1]
    for part in arch:
        for prefix, backend in (("cu", "cuda"), ("rocm", "rocm"), ("xpu", "xpu"),
                                ("metal", "metal"), ("cpu", "cpu")):
            if part.startswith(prefix) and part != "cxx11":
                return backend
    raise ValueError(f"no backend in variant name {variant!r}")


def _metadata(name: str, variant: str, unique: str, *, version: int = 1,
              license: str = "Apache-2.0", python_depends=()) -> dict:
    backend = _backend_of(variant)
    python_name = name.replace("-", "_")
    return {"id": f"_{python_name}_{backend}_{unique}", "name": name, "version": version,
            "license": license, "python-depends": list(python_depends),
            "backend": {"type": backend}}


def placeholder(name: str, variant: str) -> Files:
    """A variant built for another machine: only listed by the tests, never imported here."""
    tag = hashlib.sha256(f"{name}/{variant}".encode()).hexdigest()[:7]
    return {
        f"build/{variant}/metadata.json": _json(_metadata(name, variant, tag)),
        f"build/{variant}/__init__.py":
            f"raise ImportError('{variant} was built for another machine')\n".encode(),
    }


def noarch(name: str, unique: str, modules: dict[str, str], *, variants=("torch-cpu", "torch-cuda"),
           version: int = 1, python_depends=(), with_metadata: bool = True,
           subpackage: str | None = None) -> Files:
    """Python-only variants holding `modules` (file name -> source). With `subpackage`, the
    pre-flattening layout: build/<variant>/<subpackage>/<module>."""
    files: Files = {}
    for variant in variants:
        folder = f"build/{variant}" + (f"/{subpackage}" if subpackage else "")
        for module, source in modules.items():
            files[f"{folder}/{module}"] = source.encode()
        if with_metadata:
            files[f"build/{variant}/metadata.json"] = _json(_metadata(
                name, variant, unique.replace("-", "_"), version=version,
                python_depends=python_depends))
    return files


SILU_AND_MUL = """import torch
import torch.nn.functional as F


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]
"""

# layers.SiluAndMul, added to our examples/silu-and-mul (tests map layers of that name).
SILU_AND_MUL_LAYERS = """import torch
from torch import nn

from . import silu_and_mul


class SiluAndMul(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return silu_and_mul(input)
"""


def _versions_modules(number: int) -> dict[str, str]:
    return {
        "__init__.py": f"from . import layers\n\n\ndef version():\n    return {number}\n",
        "layers.py": "from torch import nn\n\n\nclass Version(nn.Module):\n"
                     f"    def forward(self) -> int:\n        return {number}\n",
    }


_LINEAR_BACKWARD = {
    "__init__.py": "from . import layers\n",
    "layers.py": """import torch
import torch.nn.functional as F
from torch import nn


class LinearBackward(nn.Module):
    has_backward = True
    can_torch_compile = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return F.linear(input, self.weight, self.bias)
""",
}

# The compat module of a flattened build: `build/<variant>/<name>/__init__.py`, for loaders
# that still import the pre-flattening path; it re-exports the variant's top-level package.
_FLATTENED_COMPAT = """import importlib.util
import sys
from pathlib import Path

_top = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    __name__ + "._flattened", _top / "__init__.py", submodule_search_locations=[str(_top)])
_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _module
_spec.loader.exec_module(_module)
silu_and_mul = _module.silu_and_mul
"""


# ------------------------------------------------------------------------------------------
# Builds of our examples


def _tree_hash(folder: Path, extra: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "build" not in
                       p.relative_to(folder).parts[:1]):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    for name, text in sorted(extra.items()):
        digest.update(name.encode() + b"\0" + text.encode())
    return digest.hexdigest()


def _tool_identity(kernel_builder: Path, python: Path) -> str:
    """The builder's release and the torch and tvm-ffi built against: a rebuilt kernel-builder
    of the same release reuses the cached builds (they are fixtures, not what is tested)."""
    version = subprocess.run([str(kernel_builder), "--version"], capture_output=True,
                             text=True).stdout.strip()
    frameworks = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('torch'), "
                            "m.version('apache-tvm-ffi'))"],
        capture_output=True, text=True).stdout.strip()
    return f"{version} {frameworks}"


# Changed whenever build_example builds differently, so cached builds are redone.
_BUILD_RECIPE = "every buildable variant, v2"


def build_example(example: str, cache: Path, kernel_builder: Path, python: Path,
                  extra: dict[str, str] | None = None, log=print) -> Files:
    """The variants of examples/<example> this machine builds (plus `extra` source files,
    path -> text), built with our kernel-builder; reused while the sources and the tools are
    unchanged."""
    extra = extra or {}
    source = REPO_ROOT / "examples" / example
    key = hashlib.sha256((_BUILD_RECIPE + _tree_hash(source, extra)
                          + _tool_identity(kernel_builder, python)).encode()).hexdigest()[:16]
    work = cache / example
    stamp = work / ".refsuite-stamp"
    if not (stamp.exists() and stamp.read_text() == key):
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(source, work)
        for name, text in extra.items():
            (work / name).write_text(text)
        listing = subprocess.run([str(kernel_builder), "list-variants", str(work), "--json"],
                                 capture_output=True, text=True, check=True)
        # Every variant this machine builds: cpu, and cuda where nvcc is found (a CUDA build
        # of torch makes both loaders pick the cuda variant even with no GPU present).
        buildable = [v["name"] for v in json.loads(listing.stdout)["variants"] if v["buildable"]]
        if not buildable:
            raise RuntimeError(f"examples/{example}: no variant this machine can build")
        log(f"refsuite: building examples/{example} ({', '.join(buildable)})")
        args = [str(kernel_builder), "build", str(work), "--python", str(python),
                "--unique-id", key[:7]]
        for variant in buildable:
            args += ["--variant", variant]
        built = subprocess.run(args, capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"kernel-builder build examples/{example} failed:\n"
                               f"{built.stdout}\n{built.stderr}")
        stamp.write_text(key)
    files: Files = {}
    for path in sorted((work / "build").rglob("*")):
        relative = path.relative_to(work)
        # build/.kernelhub holds the builder's records, not part of a published kernel
        if path.is_file() and relative.parts[1] != ".kernelhub" and "__pycache__" not in \
                relative.parts:
            files[str(relative)] = path.read_bytes()
    return files


# ------------------------------------------------------------------------------------------
# The repositories


def _signature_branches(make_bundle) -> dict[str, Files]:
    """kernels-test/signatures: one branch per verification outcome the tests expect."""
    modules = {"__init__.py": "def signed():\n    return True\n"}

    def variant_files(unique: str, *, bundle=None, metadata=True, digest=True) -> Files:
        files = noarch("signatures", unique, modules, with_metadata=False)
        for variant in ("torch-cpu", "torch-cuda"):
            folder = f"build/{variant}"
            data = _metadata("signatures", variant, unique.replace("-", "_"))
            if digest:
                data["digest"] = _digest_of({k[len(folder) + 1:]: v for k, v in files.items()
                                             if k.startswith(folder + "/")})
            text = _json(data)
            if metadata:
                files[f"{folder}/metadata.json"] = text
            if bundle == "broken":
                files[f"{folder}/metadata.json.sigstore"] = b'{"not": "a bundle"}\n'
            elif bundle == "private":
                files[f"{folder}/metadata.json.sigstore"] = make_bundle(text)
        return files

    return {
        "main": variant_files("main", bundle="private"),
        "v1": variant_files("v1", bundle="private"),
        "signature-missing": variant_files("signature_missing"),
        "signature-broken": variant_files("signature_broken", bundle="broken"),
        "signature-invalid": variant_files("signature_invalid", bundle="private"),
        "missing-metadata": variant_files("missing_metadata", bundle="private", metadata=False),
        "missing-digest": variant_files("missing_digest", bundle="private", digest=False),
        "invalid-metadata": variant_files("invalid_metadata", bundle="private"),
        "invalid-digest": variant_files("invalid_digest", bundle="private"),
    }


def _digest_of(files: Files) -> dict:
    return {"algorithm": "sha256", "files": {
        name: base64.b64encode(hashlib.sha256(data).digest()).decode()
        for name, data in sorted(files.items())}}


def _private_bundle_maker():
    sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
    try:
        from private_sigstore import PrivateSigstore
    finally:
        sys.path.pop(0)
    sigstore = PrivateSigstore()

    def make(artifact: bytes) -> bytes:
        # A well-formed bundle from a CA production Sigstore does not trust.
        return sigstore.sign(artifact, "https://github.com/kernels-test/signatures/"
                             ".github/workflows/build.yaml@refs/heads/main")
    return make


def repositories(cache: Path, kernel_builder: Path, python: Path, log=print) -> list[Repo]:
    relu = build_example("relu", cache, kernel_builder, python, log=log)
    for variant in RELU_VARIANTS:
        if not any(name.startswith(f"build/{variant}/") for name in relu):
            relu.update(placeholder("relu", variant))
    relu_tvm_ffi = build_example("relu-tvm-ffi", cache, kernel_builder, python, log=log)
    silu_and_mul = build_example(
        "silu-and-mul", cache, kernel_builder, python, log=log,
        extra={"torch-ext/silu_and_mul/layers.py": SILU_AND_MUL_LAYERS,
               "torch-ext/silu_and_mul/__init__.py":
                   (REPO_ROOT / "examples/silu-and-mul/torch-ext/silu_and_mul/__init__.py")
                   .read_text() + "\nfrom . import layers  # noqa: E402\n"})
    activation = {}
    for variant in ("torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cpu-x86_64-linux"):
        activation.update(placeholder("activation", variant))

    versions = {f"v{n}": noarch("versions", f"v{n}", _versions_modules(n), version=n)
                for n in (1, 2, 10)}
    flattened_main = noarch("flattened-build", "main", {"__init__.py": SILU_AND_MUL},
                            variants=("torch-universal",))
    flattened_main["build/torch-universal/flattened_build/__init__.py"] = \
        _FLATTENED_COMPAT.encode()
    simple = {"__init__.py": SILU_AND_MUL}
    return [
        Repo("kernels-community/relu", {"main": relu, "v1": relu}),
        Repo("kernels-community/activation", {"main": activation, "v1": activation}),
        Repo("kernels-community/einops", {"main": noarch("einops", "main", simple),
                                          "v1": noarch("einops", "v1", simple)}),
        Repo("kernels-test/versions", {"main": versions["v2"], **versions}),
        Repo("kernels-test/flattened-build", {
            "main": flattened_main,
            "v1": flattened_main,
            "without-compat-module": noarch("flattened-build", "without_compat", simple,
                                            variants=("torch-universal",)),
            "pre-flattening": noarch("flattened-build", "pre", simple, with_metadata=False,
                                     variants=("torch-universal",),
                                     subpackage="flattened_build"),
        }),
        Repo("kernels-test/silu-and-mul", {"main": silu_and_mul, "v1": silu_and_mul,
                                           "layers": silu_and_mul}),
        Repo("kernels-test/relu-tvm-ffi", {"main": relu_tvm_ffi, "v1": relu_tvm_ffi}),
        Repo("kernels-test/backward-marker-test", {
            "main": noarch("backward-marker-test", "main", _LINEAR_BACKWARD)}),
        Repo("kernels-test/python-invalid-dep", {
            "main": noarch("python-invalid-dep", "main", simple, python_depends=["kepler-22b"])}),
        Repo("kernels-test/only-torch-2.4", {"main": {
            **placeholder("only-torch-2.4", "torch24-cxx11-cu121-x86_64-linux"),
            **placeholder("only-torch-2.4", "torch24-cxx98-cpu-x86_64-linux")}}),
        Repo("kernels-test/no-compatible-build", {
            "main": placeholder("no-compatible-build", "torch24-cxx11-cu121-x86_64-linux"),
            "v1": placeholder("no-compatible-build", "torch24-cxx11-cu121-x86_64-linux")}),
        Repo("kernels-test/kernel-deps", {"main": noarch("kernel-deps", "main", simple),
                                          "v1": noarch("kernel-deps", "v1", simple)}),
        Repo("kernels-test/signatures", _signature_branches(_private_bundle_maker())),
        Repo("kernels-test-untrusted/not-a-trused-org-kernel", {
            "main": noarch("not-a-trused-org-kernel", "main", simple),
            "v1": noarch("not-a-trused-org-kernel", "v1", simple)}),
        Repo("kernels-test-untrusted/ci-test-kernel", {
            "main": noarch("ci-test-kernel", "main", simple),
            "v1": noarch("ci-test-kernel", "v1", simple)}),
    ]


# ------------------------------------------------------------------------------------------
# Publishing, over the Hub's HTTP API (what huggingface_hub sends, without its start-up cost)


class HubWriter:
    def __init__(self, url: str, token: str):
        self.url = url.rstrip("/")
        self.token = token
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def _post(self, path: str, body: bytes, content_type: str) -> dict:
        request = urllib.request.Request(self.url + path, data=body, method="POST", headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": content_type})
        try:
            with self._opener.open(request, timeout=120) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"POST {path}: {error.code} {error.read()[:500]!r}") from None

    def create(self, repo_id: str) -> None:
        org, name = repo_id.split("/")
        self._post("/api/repos/create", json.dumps(
            {"name": name, "organization": org, "type": "kernel"}).encode(), "application/json")

    def branch(self, repo_id: str, branch: str, start: str) -> None:
        self._post(f"/api/kernels/{repo_id}/branch/{urllib.parse.quote(branch, safe='')}",
                   json.dumps({"startingPoint": start}).encode(), "application/json")

    def commit(self, repo_id: str, branch: str, files: Files, deleted=()) -> str:
        lines = [json.dumps({"key": "header", "value": {"summary": f"refsuite: {branch}",
                                                        "description": ""}})]
        for path, data in sorted(files.items()):
            lines.append(json.dumps({"key": "file", "value": {
                "path": path, "encoding": "base64", "content": base64.b64encode(data).decode()}}))
        for path in sorted(deleted):
            lines.append(json.dumps({"key": "deletedFile", "value": {"path": path}}))
        answer = self._post(f"/api/kernels/{repo_id}/commit/{urllib.parse.quote(branch, safe='')}",
                            ("\n".join(lines) + "\n").encode(), "application/x-ndjson")
        return answer["commitOid"]


def publish(repos: list[Repo], url: str, token: str) -> dict[str, dict[str, str]]:
    """Creates every repository with its branches; returns repo id -> branch -> commit."""
    writer = HubWriter(url, token)
    commits: dict[str, dict[str, str]] = {}
    for repo in repos:
        writer.create(repo.repo_id)
        main = repo.branches["main"]
        heads = {"main": writer.commit(repo.repo_id, "main", main)}
        for branch, files in repo.branches.items():
            if branch == "main":
                continue
            writer.branch(repo.repo_id, branch, "main")
            if files is main:
                heads[branch] = heads["main"]
                continue
            heads[branch] = writer.commit(repo.repo_id, branch, files,
                                          deleted=set(main) - set(files))
        commits[repo.repo_id] = heads
    return commits


def server_config() -> str:
    # The built .so files travel in the commits: the tests read kernels, not LFS transfers
    # (tests/e2e/test_serve_lfs.py covers those).
    return "[storage]\nlfs-threshold = false\n\n" + "".join(
        f"[organizations.{org}]\ntrustedKernelPublisher = true\n\n" for org in TRUSTED_ORGS)


def rewrite_lock(text: str, commits: dict[str, dict[str, str]]) -> str:
    """A kernels.lock of the reference's tests with each entry's commit replaced by the commit
    the local hub holds for that dependency (its v<N> branch, or the revision)."""
    entries = json.loads(text)
    for entry in entries:
        dependency = entry["dependency"]
        branch = (f"v{dependency['version']}" if "version" in dependency
                  else dependency["revision"])
        heads = commits.get(dependency["repo-id"], {})
        if branch in heads:
            entry["lock"]["commit"] = heads[branch]
    return json.dumps(entries, indent=2) + "\n"


def environ_without_hub() -> dict:
    env = dict(os.environ)
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE",
                 "HF_ENDPOINT", "LOCAL_KERNELS", "KERNELS_CACHE"):
        env.pop(name, None)
    return env
