# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder check-config` against the reference's `Build.open` (kernels._rust).

Every corpus build.toml and several hundred deterministic mutations of them are given to both.
Our verdict (valid or not, and the edition read) must equal the reference's, except for the
cases in DELIBERATE_DIFFERENCES, where it must differ in the way the table says.

The reference is `kernels._rust.Build.open(dir)` (kernels 0.17.2): `kernels_data` 0.16.2 has
no build.toml API. It accepts edition 5 silently, upgrades edition 4 with a warning on stderr,
refuses edition 3 ("unsupported legacy format") and fails everything else with ValueError.
"""
from __future__ import annotations

import copy
import functools
import json
import os
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomlkit

from conftest import CORPUS_DIR, run

Build = pytest.importorskip("kernels._rust").Build

LEGACY_V3 = "unsupported legacy format"
V4_WARNING = "legacy v4 format"


# --------------------------------------------------------------------------------------------
# Where we deliberately differ from the reference. Each generated case whose `kind` is a key
# here must differ from the reference in exactly this way; every other case must agree.
DELIBERATE_DIFFERENCES = {
    "v3-accepted": (
        "The reference refuses edition 3 files in Build.open and only migrates them with "
        "update-build; we read them, upgrade in memory and warn, as for edition 4.",
        "valid",
    ),
    "v2-accepted": (
        "The reference dropped the v2 reader (dead code), so v2 files fail as 'did not match "
        "v4 or v3'; we still read the historic v2 shape and upgrade it with a warning.",
        "valid",
    ),
    "v1-accepted": (
        "As for v2: the historic v1 shape (`language` instead of `backend`) is read and "
        "upgraded, where the reference can no longer parse it.",
        "valid",
    ),
    "noarch-kebab": (
        "[torch-noarch] cuda-capabilities / rocm-archs are the documented spelling; the "
        "reference's struct lacks rename_all so it only takes cuda_capabilities / rocm_archs. "
        "We take both.",
        "valid",
    ),
    "python-depends-unknown": (
        "Build.open never checks python-depends against the allow-list (the reference fails "
        "only later, in Nix or pyproject generation); we report unknown names at check time.",
        "invalid",
    ),
    "tpu-python-depends": (
        "No python dependencies are defined for tpu; the reference fails only when resolving "
        "them, we at check time.",
        "invalid",
    ),
}


@dataclass
class Case:
    name: str
    text: str
    kind: str | None = None  # a DELIBERATE_DIFFERENCES key, or None: must agree
    tags: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Generation: corpus files, then mutations of each (on the parsed document, re-serialised with
# tomlkit, or on the text for syntax errors). Everything is deterministic.

def corpus() -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted(CORPUS_DIR.glob("*.toml"))}


def dump(doc: dict) -> str:
    return tomlkit.dumps(doc)


def framework_key(doc: dict) -> str | None:
    for key in ("torch", "torch-noarch", "tvm-ffi"):
        if key in doc:
            return key
    return None


def kernels(doc: dict) -> dict:
    kernel = doc.get("kernel")
    return kernel if isinstance(kernel, dict) else {}


def first_kernel(doc: dict, backend: str | None = None):
    for name, table in kernels(doc).items():
        if isinstance(table, dict) and (backend is None or table.get("backend") == backend):
            return name, table
    return None, None


def is_v5(doc: dict) -> bool:
    return doc.get("general", {}).get("edition") == 5


# [general] mutations do not depend on the rest of the file: they are applied to one file of
# each shape (torch with kernels, v4, stable-ABI table, noarch, tpu, neuron, tvm-ffi) to keep the
# run short. Framework, kernel, edition and syntax mutations are applied to every file.
GENERAL_MUTATION_FILES = {"relu", "relu-archs-subset", "relu-torch-stable-abi", "relu-triton",
                          "relu-tpu", "relu-nki", "relu-tvm-ffi", "cutlass-gemm"}


def make_variant(base: dict, suffix: str, change, kind=None):
    """(suffix, text, kind) for `base` changed by `change`, or None if it does not apply."""
    doc = copy.deepcopy(base)
    if change(doc) is False:
        return None
    return (suffix, dump(doc), kind)


def general(doc):
    return doc["general"]


def set_general(key, value):
    return lambda doc: general(doc).__setitem__(key, value)


def drop_general(key):
    def change(doc):
        if key not in general(doc):
            return False
        del general(doc)[key]
    return change


def general_mutations(base: dict):
    """Mutations of [general] and the top level."""
    variant = functools.partial(make_variant, base)
    out = []
    add = out.append

    # Unknown keys and tables, with and without a near miss.
    add(variant("general-licence-typo", set_general("licence", "MIT")))
    add(variant("general-unknown-key", set_general("maintainer", "me")))
    add(variant("general-minver", set_general("minver", "0.17")))
    add(variant("top-level-unknown-table", lambda d: d.__setitem__("tests", {"src": []})))
    add(variant("top-level-unknown-key", lambda d: d.__setitem__("author", "x")))
    add(variant("hub-unknown-key", lambda d: general(d).setdefault("hub", {}).__setitem__("repo", "a/b")))
    add(variant("hub-branch", lambda d: general(d).setdefault("hub", {}).__setitem__("branch", "main")))
    add(variant("hub-repo-id-int", lambda d: general(d).setdefault("hub", {}).__setitem__("repo-id", 3)))
    add(variant("general-metal-table", set_general("metal", {})))
    add(variant("general-cuda-unknown", lambda d: general(d).setdefault("cuda", {}).__setitem__("foo", 1)))

    # Backends.
    for i, bad in enumerate(["cudaa", "CUDA", "Cpu", "gpu", "", "tpu", "cann"]):
        add(variant(f"backends-{i}-{bad or 'empty'}", lambda d, b=bad: general(d)["backends"].append(b)))
    add(variant("backends-empty-list", set_general("backends", [])))
    add(variant("backends-string", set_general("backends", "cuda")))
    add(variant("backends-int-element", set_general("backends", [1])))
    add(variant("backends-duplicate", lambda d: general(d)["backends"].append(general(d)["backends"][0])))
    add(variant("backends-missing", drop_general("backends")))

    # Names.
    for i, bad in enumerate(["Relu", "re_lu", "r", "relu-", "-relu", "1relu", "relu kernel", "ok-name2"]):
        add(variant(f"name-{i}", set_general("name", bad)))
    add(variant("name-int", set_general("name", 7)))
    add(variant("name-missing", drop_general("name")))

    # Versions and edition.
    for i, bad in enumerate([-1, "1", 1.5, 0, 2**40, True]):
        add(variant(f"version-{i}", set_general("version", bad)))
    add(variant("version-missing", drop_general("version")))
    add(variant("license-missing", drop_general("license")))
    add(variant("license-int", set_general("license", 1)))
    add(variant("license-empty", set_general("license", "")))
    for i, bad in enumerate([4, 6, 0, "5", 5.0, -1, [5]]):
        add(variant(f"edition-{i}", set_general("edition", bad)))

    # URLs.
    for i, url in enumerate(["https://github.com/org/repo", "git@github.com:org/repo.git",
                             "ftp://example.com/repo", "not a url", "", "https://",
                             "github.com/org/repo", "ssh://git@host/repo", "git+https://h/r",
                             "file:///tmp/repo", "HTTPS://github.com/a/b"]):
        add(variant(f"upstream-{i}", set_general("upstream", url)))
    add(variant("source-https", set_general("source", "https://github.com/org/kernel")))
    add(variant("source-bad", set_general("source", "mailto:me@example.com")))
    add(variant("upstream-int", set_general("upstream", 5)))

    # General backend tables and their versions.
    for i, ver in enumerate(["12.8", "12", "12.8.1", " 12.8 ", "+12.8", "12.x", "", "12.0", 12]):
        add(variant(f"cuda-minver-{i}", lambda d, v=ver: general(d).setdefault("cuda", {}).__setitem__("minver", v)))
    add(variant("cuda-maxver", lambda d: general(d).setdefault("cuda", {}).__setitem__("maxver", "13.0")))

    # python-depends against the allow-list.
    add(variant("python-depends-einops", set_general("python-depends", ["einops"])))
    add(variant("python-depends-tvm-ffi", set_general("python-depends", ["tvm-ffi", "helion"])))
    add(variant("python-depends-typo", set_general("python-depends", ["einopz"]), "python-depends-unknown"))
    add(variant("python-depends-backend-name", set_general("python-depends", ["nki"]), "python-depends-unknown"))
    add(variant("python-depends-int", set_general("python-depends", [1])))
    add(variant("python-depends-string", set_general("python-depends", "einops")))
    add(variant("cuda-python-depends", lambda d: general(d).setdefault("cuda", {}).__setitem__("python-depends", ["nvidia-cutlass-dsl"])))
    add(variant("cuda-python-depends-bad", lambda d: general(d).setdefault("cuda", {}).__setitem__("python-depends", ["cutlass"]), "python-depends-unknown"))
    add(variant("xpu-python-depends", lambda d: general(d).setdefault("xpu", {}).__setitem__("python-depends", ["onednn"])))
    add(variant("neuron-python-depends-bad", lambda d: general(d).setdefault("neuron", {}).__setitem__("python-depends", ["einops"]), "python-depends-unknown"))
    add(variant("tpu-python-depends", lambda d: general(d).setdefault("tpu", {}).__setitem__("python-depends", ["jax"]),
                "tpu-python-depends" if is_v5(base) else None))
    add(variant("tpu-kernel-depends", lambda d: general(d).setdefault("tpu", {}).__setitem__("kernel-depends", [])))

    # kernel-depends (edition 5 only).
    good_dep = {"repo-id": "kernels-community/activation", "version": 1}
    for i, dep in enumerate([good_dep, {"repo-id": "a/b", "revision": "main"},
                             {"repo-id": "a/b", "version": 1, "revision": "main"},
                             {"repo-id": "a/b"}, {"version": 1}, {"repo-id": "a/b", "version": -1},
                             {"repo-id": "a/b", "version": 1, "extra": True},
                             {"repo-id": "a/b", "revision": 5}]):
        add(variant(f"kernel-depends-{i}", lambda d, x=dep: general(d).__setitem__("kernel-depends", [x])))
    add(variant("kernel-depends-string", set_general("kernel-depends", "a/b")))
    add(variant("cuda-kernel-depends", lambda d: general(d).setdefault("cuda", {}).__setitem__("kernel-depends", [good_dep])))
    return out


def mutations(stem: str, text: str):
    """Yields (suffix, mutated text, kind) for one corpus file."""
    base = tomllib.loads(text)
    variant = functools.partial(make_variant, base)
    out = general_mutations(base) if stem in GENERAL_MUTATION_FILES else []
    add = out.append

    # Frameworks.
    fw = framework_key(base)
    if fw is not None:
        add(variant("framework-missing", lambda d: d.pop(fw)))
        other = "tvm-ffi" if fw != "tvm-ffi" else "torch"
        add(variant("framework-two", lambda d: d.__setitem__(other, {"src": ["x.cpp"]})))
        add(variant("framework-not-table", lambda d: d.__setitem__(fw, 1)))
        add(variant(f"{fw}-unknown-key", lambda d: d[fw].__setitem__("sources", ["x"])))
        add(variant(f"{fw}-pyext-string", lambda d: d[fw].__setitem__("pyext", "py")))
    if fw == "torch":
        for i, ver in enumerate(["2.9", "2", "2.9.1", "two", ""]):
            add(variant(f"torch-minver-{i}", lambda d, v=ver: d["torch"].__setitem__("minver", v)))
        add(variant("torch-maxver", lambda d: d["torch"].__setitem__("maxver", "2.10")))
        for i, abi in enumerate(["2.11", "2.11.1", 2, {"cuda": "2.11"}, {"cudaa": "2.11"},
                                 {"cuda": "2"}, {}, {"tpu": "2.11"}, {"CUDA": "2.11"}]):
            add(variant(f"torch-stable-abi-{i}", lambda d, a=abi: d["torch"].__setitem__("stable-abi", a)))
        add(variant("torch-cxx-flags", lambda d: d["torch"].__setitem__("cxx-flags", ["-O3"])))
        add(variant("torch-src-int", lambda d: d["torch"].__setitem__("src", [1])))
        add(variant("torch-include-string", lambda d: d["torch"].__setitem__("include", ".")))
    if fw == "torch-noarch":
        add(variant("noarch-snake-archs", lambda d: d["torch-noarch"].update({"cuda_capabilities": ["8.0"], "rocm_archs": ["gfx942"]})))
        add(variant("noarch-kebab-archs", lambda d: d["torch-noarch"].update({"cuda-capabilities": ["8.0"]}), "noarch-kebab"))
        add(variant("noarch-kebab-rocm", lambda d: d["torch-noarch"].update({"rocm-archs": ["gfx942"]}), "noarch-kebab"))
        add(variant("noarch-src", lambda d: d["torch-noarch"].__setitem__("src", [])))
        add(variant("noarch-stable-abi", lambda d: d["torch-noarch"].__setitem__("stable-abi", "2.11")))
    if fw == "tvm-ffi":
        add(variant("tvm-ffi-no-src", lambda d: d["tvm-ffi"].pop("src")))
        add(variant("tvm-ffi-stable-abi", lambda d: d["tvm-ffi"].__setitem__("stable-abi", "2.11")))

    # Kernels.
    name, kernel = first_kernel(base)
    if name is not None:
        def on_kernel(change, kname=name):
            def apply(doc):
                return change(doc["kernel"][kname])
            return apply

        backend = kernel.get("backend")
        add(variant("kernel-backend-missing", on_kernel(lambda k: k.pop("backend"))))
        add(variant("kernel-depends-missing", on_kernel(lambda k: k.pop("depends"))))
        add(variant("kernel-src-missing", on_kernel(lambda k: k.pop("src"))))
        for i, bad in enumerate(["cudaa", "CUDA", "tpu", "neuron", "cann", 1]):
            add(variant(f"kernel-backend-{i}", on_kernel(lambda k, b=bad: k.__setitem__("backend", b))))
        for i, dep in enumerate(["torchh", "Torch", "cutlass_3_7", "cutlass_4_4", "metal-cpp", "sycl_tla", "metal_cpp"]):
            add(variant(f"kernel-dep-{i}", on_kernel(lambda k, x=dep: k.__setitem__("depends", [x]))))
        add(variant("kernel-depends-string", on_kernel(lambda k: k.__setitem__("depends", "torch"))))
        add(variant("kernel-depends-duplicate", on_kernel(lambda k: k.__setitem__("depends", ["torch", "torch"]))))
        add(variant("kernel-unknown-key", on_kernel(lambda k: k.__setitem__("sources", ["a.cu"]))))
        add(variant("kernel-cxx-flags", on_kernel(lambda k: k.__setitem__("cxx-flags", ["-O3"]))))
        wrong = {"cuda": ("rocm-archs", ["gfx942"]), "rocm": ("cuda-capabilities", ["9.0"]),
                 "xpu": ("cuda-flags", ["-O3"]), "cpu": ("sycl-flags", ["-O3"]),
                 "metal": ("hip-flags", ["-O3"])}.get(backend)
        if wrong:
            add(variant("kernel-wrong-backend-key", on_kernel(lambda k: k.__setitem__(*wrong))))
        if backend == "cuda":
            for i, ver in enumerate(["12.8", "12", "12.8.1"]):
                add(variant(f"kernel-cuda-minver-{i}", on_kernel(lambda k, v=ver: k.__setitem__("cuda-minver", v))))
            add(variant("kernel-cuda-capabilities", on_kernel(lambda k: k.__setitem__("cuda-capabilities", ["9.0a", "10.0+PTX"]))))
        add(variant("kernel-not-table", lambda d: d["kernel"].__setitem__("bogus", 1)))
        add(variant("kernel-weird-name", lambda d: d["kernel"].__setitem__("Weird Name!", copy.deepcopy(kernel))))
        add(variant("kernel-backend-unlisted", lambda d: (general(d).__setitem__("backends", [b for b in general(d)["backends"] if b != backend] or ["cpu"]) if backend != "cpu" else False)))
    add(variant("kernel-array-of-tables", lambda d: d.__setitem__("kernel", [{"backend": "cuda"}])))

    # Editions: strip the v5-only parts into v4, v3, v2 and v1 shapes.
    out.extend(legacy_variants(base))

    # Text-level: broken TOML and equivalent spellings.
    add(("syntax-unclosed-header", text.replace("[general]", "[general", 1), None))
    add(("syntax-duplicate-key", text.replace("[general]\n", "[general]\nname = \"dup\"\n", 1), None))
    add(("syntax-missing-equals", text.replace("license =", "license", 1), None))
    add(("syntax-unterminated-string", text.replace('license = "', 'license = "\n', 1), None))
    add(("syntax-duplicate-table", text + "\n[general]\n", None))
    add(("syntax-bad-escape", text.replace("[general]\n", "[general]\nupstream = \"\\q\"\n", 1), None))
    add(("comments-and-blank-lines", "# a comment\n\n" + text.replace("\n", "  # trailing\n"), None))
    add(("inline-general", inline_general(base), None))
    return [m for m in out if m is not None]


def inline_general(doc: dict) -> str:
    """The same document with [general] written as an inline table."""
    rest = {k: v for k, v in doc.items() if k != "general"}
    general = tomlkit.inline_table()
    for key, value in doc["general"].items():
        if isinstance(value, dict):
            inner = tomlkit.inline_table()
            inner.update(value)
            general[key] = inner
        else:
            general[key] = value
    head = tomlkit.document()
    head["general"] = general
    return tomlkit.dumps(head) + "\n" + tomlkit.dumps(rest)


def strip_v5(doc: dict) -> dict | None:
    """The edition-4 form of an edition-5 document, or None when it uses v5-only features."""
    doc = copy.deepcopy(doc)
    general = doc["general"]
    if "kernel-depends" in general or "tpu" in general:
        return None
    for sub in ("cuda", "neuron", "xpu"):
        if "kernel-depends" in general.get(sub, {}):
            return None
    if isinstance(doc.get("torch", {}).get("stable-abi"), dict):
        return None
    general.pop("edition", None)
    return doc


def legacy_variants(base: dict):
    out = []
    v4 = strip_v5(base)
    if v4 is None:
        return out
    out.append(("as-v4", dump(v4), None))
    out.append(("as-v4-with-kernel-depends", dump({**v4, "general": {**v4["general"], "kernel-depends": []}}), None))

    # v3: no license/version required, no torch-noarch (absence means noarch), no cxx-flags,
    # stable-abi or source.
    v3 = copy.deepcopy(v4)
    v3["general"].pop("license", None)
    v3["general"].pop("version", None)
    v3["general"].pop("source", None)
    v3.pop("torch-noarch", None)
    for fw in ("torch", "tvm-ffi"):
        if fw in v3:
            v3[fw].pop("cxx-flags", None)
            v3[fw].pop("stable-abi", None)
    out.append(("as-v3", dump(v3), "v3"))
    v3_licensed = copy.deepcopy(v3)
    v3_licensed["general"]["license"] = "Apache-2.0"
    out.append(("as-v3-licensed", dump(v3_licensed), "v3"))
    bad_v3 = copy.deepcopy(v3)
    bad_v3["general"]["backends"] = ["cudaa"]
    out.append(("as-v3-bad-backend", dump(bad_v3), "v3"))

    # v2 and v1 only had [torch] kernels.
    if "torch" not in v4 or not kernels(v4):
        return out
    torch = {k: v for k, v in v4["torch"].items() if k in ("include", "pyext", "src", "minver", "maxver")}
    v2 = {"general": {"name": v4["general"]["name"]}, "torch": torch,
          "kernel": copy.deepcopy(v4["kernel"])}
    if "hub" in v4["general"]:
        v2["general"]["hub"] = v4["general"]["hub"]
    out.append(("as-v2", dump(v2), "v2-accepted"))
    v2_universal = {"general": {"name": v4["general"]["name"], "universal": True,
                                "python-depends": ["einops"]},
                    "torch": {"src": [], "pyext": ["py"]}}
    out.append(("as-v2-universal", dump(v2_universal), "v2-accepted"))
    v2_bad = copy.deepcopy(v2)
    v2_bad["general"]["python-depends"] = ["einopz"]
    out.append(("as-v2-bad-python-depends", dump(v2_bad), None))

    language = {"cuda": "cuda", "rocm": "cuda-hipify", "metal": "metal"}
    v1_kernels = {}
    for name, table in kernels(v4).items():
        if table.get("backend") not in language:
            continue
        entry = {k: v for k, v in table.items() if k in ("depends", "include", "src", "cuda-capabilities", "rocm-archs")}
        entry["language"] = language[table["backend"]]
        v1_kernels[f"v1{name}"] = entry
    if v1_kernels:
        v1 = {"general": {"name": v4["general"]["name"]},
              "torch": {k: v for k, v in torch.items() if k in ("include", "pyext", "src")},
              "kernel": v1_kernels}
        out.append(("as-v1", dump(v1), "v1-accepted"))
        v1_bad = copy.deepcopy(v1)
        next(iter(v1_bad["kernel"].values()))["language"] = "fortran"
        out.append(("as-v1-bad-language", dump(v1_bad), None))
    return out


def generic_cases():
    yield Case("empty-file", "")
    yield Case("only-general", '[general]\nname = "relu"\n')
    yield Case("general-not-table", "general = 1\n")
    yield Case("not-utf8-free-text", "this is not toml\n")
    yield Case("minimal-v5", '[general]\nname = "ab"\nversion = 1\nedition = 5\nlicense = "MIT"\n'
                             'backends = ["cpu"]\n[torch-noarch]\n')
    yield Case("dotted-keys", '[general]\nname = "ab"\nversion = 1\nedition = 5\nlicense = "MIT"\n'
                              'backends = ["cuda"]\ncuda.minver = "12.6"\n[torch]\nsrc = []\n')
    yield Case("v3-no-framework", '[general]\nname = "ab"\nbackends = ["cuda"]\n', "v3")
    # TOML spellings both parsers must read alike.
    head = '[general]\nname = "ab"\nversion = 1\nlicense = "MIT"\nbackends = ["cuda"]\n'
    for i, edition in enumerate(["0x5", "+5", "5_0", "0o5", "05", "5e0", "inf", "true", "1979-05-27"]):
        yield Case(f"edition-spelling-{i}", head + f"edition = {edition}\n[torch]\n")
    for i, body in enumerate([
        "[torch]\nsrc = [\n  'a.cpp', # literal string\n  \"b.cpp\",\n]\n",
        "[torch]\nsrc = [\"\"\"multi\nline\"\"\"]\n",
        "[torch]\nsrc = [\"\\u00e9.cpp\"]\n",
        "[torch]\nsrc = [[\"nested\"]]\n",
        "[torch]\nsrc = [\"a\", 1]\n",
        "[[general.kernel-depends]]\nrepo-id = \"a/b\"\nversion = 1\n[torch]\n",
        "[general.\"hub\"]\nrepo-id = \"a/b\"\n[torch]\n",
        "[torch]\n[torch]\n",
        "[torch]\nsrc = []\n[torch.stable-abi]\ncuda = \"2.11\"\n[torch.stable-abi.extra]\n",
        "[torch]\nminver = '2.9'\nmaxver = \"\"\"2.10\"\"\"\n",
        "[torch]\nsrc = [ ]\r\n",
        "\t[torch]\n\tsrc = []\n",
        "[torch]\nsrc = []\n[kernel.a]\nbackend = \"cuda\"\ndepends = []\nsrc = []\n[kernel.a.extra]\n",
        "[torch]\nsrc = []\n[kernel]\na = { backend = \"cuda\", depends = [], src = [] }\n",
    ]):
        yield Case(f"toml-spelling-{i}", head.replace("version = 1", "version = 1\nedition = 5") + body)
    # TOML 1.1 features and control characters: both parsers implement TOML 1.0 and refuse them.
    v5_head = head.replace("version = 1", "version = 1\nedition = 5")
    for i, body in enumerate([
        'upstream = "\\e"\n[torch]\n',
        '[general.hub]\nrepo-id = "\\x41"\n[torch]\n',
        '[torch]\n[kernel]\nk = { backend = "cuda",\n depends = [], src = [] }\n',
        '[torch]\n[kernel]\nk = { backend = "cuda", depends = [], src = [], }\n',
        '[torch]\n[kernel.é]\nbackend = "cuda"\ndepends = []\nsrc = []\n',
        '[general.hub]\nrepo-id = "a\x01b"\n[torch]\n',
        '[general.hub]\nrepo-id = "a\x7fb"\n[torch]\n',
        '[torch]\rsrc = []\n',
    ]):
        yield Case(f"toml-1.1-or-control-{i}", v5_head + body)
    yield Case("integer-too-large", v5_head.replace("version = 1", "version = 99999999999999999999") + "[torch]\n")
    yield Case("crlf-file", (head + "edition = 5\n[torch]\n").replace("\n", "\r\n"))
    yield Case("bom-file", "\ufeff" + head + "edition = 5\n[torch]\n")


def all_cases() -> list[Case]:
    cases = []
    for stem, text in corpus().items():
        cases.append(Case(f"{stem}", text))
        for suffix, mutated, kind in mutations(stem, text):
            cases.append(Case(f"{stem}/{suffix}", mutated, kind))
    cases.extend(generic_cases())
    return cases


# --------------------------------------------------------------------------------------------
# Running both sides.

def reference_verdict(directory: Path) -> tuple[str, str]:
    """("ok5" | "ok4" | "legacy" | "error", message), with Rust's stderr captured."""
    with tempfile.TemporaryFile(mode="w+") as captured:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            Build.open(str(directory))
            outcome, message = "ok", ""
        except ValueError as error:
            outcome, message = "error", str(error)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        stderr = captured.read()
    if outcome == "ok":
        return ("ok4" if V4_WARNING in stderr else "ok5"), stderr
    if LEGACY_V3 in message:
        return "legacy", message
    return "error", message


def v4_form(text: str) -> str | None:
    """A v3 document made edition 4 (license, version, [torch-noarch]), for the v3 oracle."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    general = doc.get("general")
    if not isinstance(general, dict):
        return None
    general.setdefault("license", "Apache-2.0")
    general.setdefault("version", 1)
    if framework_key(doc) is None:
        doc["torch-noarch"] = {}
    return dump(doc)


def ours(kernel_builder: Path, directory: Path) -> dict:
    result = run([kernel_builder, "check-config", directory, "--json"])
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] == (result.returncode == 0)
    return report


CASES = all_cases()


def test_enough_cases():
    assert len(CASES) >= 1000
    kinds = {c.kind for c in CASES if c.kind}
    assert kinds - {"v3"} <= set(DELIBERATE_DIFFERENCES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_config_matches_reference(case: Case, kernel_builder: Path, tmp_path: Path):
    (tmp_path / "build.toml").write_text(case.text)
    ref, ref_message = reference_verdict(tmp_path)
    report = ours(kernel_builder, tmp_path)
    errors = [d for d in report["diagnostics"] if d["severity"] == "error"]
    context = f"reference: {ref} {ref_message}\nours: {json.dumps(report, indent=1)}"

    if not report["valid"]:
        # Every rejection is explained, at a position in the file.
        assert errors, context
        assert all(d["line"] >= 1 and d["column"] >= 1 for d in errors), context

    if ref == "legacy":
        # The reference refuses every edition-3 file. Whether the file is a *valid* v3 file is
        # decided by the reference itself, on the file's edition-4 equivalent.
        oracle_text = v4_form(case.text)
        oracle_dir = tmp_path / "oracle"
        oracle_dir.mkdir()
        (oracle_dir / "build.toml").write_text(oracle_text or "")
        oracle, _ = reference_verdict(oracle_dir)
        expected_valid = oracle in ("ok4", "ok5")
        assert report["valid"] == expected_valid, context
        if expected_valid:
            assert DELIBERATE_DIFFERENCES["v3-accepted"][1] == "valid"
            assert report["edition"] == 3, context
        return

    kind = case.kind if case.kind != "v3" else None
    if kind is not None:
        reason, expected = DELIBERATE_DIFFERENCES[kind]
        ref_valid = ref in ("ok4", "ok5")
        assert report["valid"] == (expected == "valid"), f"{reason}\n{context}"
        assert report["valid"] != ref_valid, f"no longer a difference: {reason}\n{context}"
        return

    if ref == "ok5":
        assert report["valid"] and report["edition"] == 5, context
    elif ref == "ok4":
        assert report["valid"] and report["edition"] == 4, context
        assert any("update-build" in d.get("hint", "") for d in report["diagnostics"]), context
    else:
        assert not report["valid"], context


# --------------------------------------------------------------------------------------------
# The command itself: exit codes, human output, JSON shape, and what it says about bad paths.

V5_MINIMAL = ('[general]\nname = "ab"\nversion = 1\nedition = 5\nlicense = "MIT"\n'
              'backends = ["cuda"]\n[torch-noarch]\n')


def test_valid_file_exits_zero_quietly(kernel_builder: Path, tmp_path: Path):
    (tmp_path / "build.toml").write_text(V5_MINIMAL)
    result = run([kernel_builder, "check-config", tmp_path])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "valid (edition 5)" in result.stdout


def test_errors_render_with_location_caret_and_hint(kernel_builder: Path, tmp_path: Path):
    (tmp_path / "build.toml").write_text(V5_MINIMAL.replace('["cuda"]', '["cudaa"]'))
    result = run([kernel_builder, "check-config", tmp_path])
    assert result.returncode == 1
    path = tmp_path / "build.toml"
    assert result.stderr.splitlines() == [
        f'{path}:6:13: error: unknown backend "cudaa"',
        ' 6 | backends = ["cudaa"]',
        "   |             ^",
        '  hint: did you mean "cuda"?',
    ]


def test_warnings_alone_exit_zero(kernel_builder: Path, tmp_path: Path):
    (tmp_path / "build.toml").write_text(V5_MINIMAL.replace("edition = 5\n", ""))
    result = run([kernel_builder, "check-config", tmp_path, "--json"])
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["valid"] is True and report["edition"] == 4
    assert [d["severity"] for d in report["diagnostics"]] == ["warning"]
    assert report["diagnostics"][0]["hint"] == "run `kernel-builder update-build` to persist the upgrade"


def test_json_lists_every_error_sorted(kernel_builder: Path, tmp_path: Path):
    text = V5_MINIMAL.replace('"ab"', '"AB"').replace('["cuda"]', '["cuda", "gpu"]')
    (tmp_path / "build.toml").write_text(text + "[kernel.k]\nbackend = \"tpu\"\n")
    result = run([kernel_builder, "check-config", tmp_path, "--json"])
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert list(report) == ["valid", "edition", "diagnostics"]
    assert report["valid"] is False and report["edition"] == 5
    positions = [(d["line"], d["column"]) for d in report["diagnostics"]]
    assert positions == sorted(positions)
    assert [d["message"] for d in report["diagnostics"]] == [
        'invalid kernel name "AB"',
        'unknown backend "gpu"',
        'missing required key "depends" in [kernel.k]',
        'missing required key "src" in [kernel.k]',
        'backend "tpu" has no native kernels',
    ]


def test_syntax_error_has_no_edition(kernel_builder: Path, tmp_path: Path):
    (tmp_path / "build.toml").write_text("[general\n")
    report = json.loads(run([kernel_builder, "check-config", tmp_path, "--json"]).stdout)
    assert report["edition"] is None and report["valid"] is False
    assert report["diagnostics"][0]["message"].startswith("invalid TOML: ")


def test_bad_directory_is_a_clear_error(kernel_builder: Path, tmp_path: Path):
    result = run([kernel_builder, "check-config", tmp_path / "missing"])
    assert result.returncode == 1
    assert result.stderr == f'kernel-builder: error: "{tmp_path / "missing"}" is not a directory\n'
    result = run([kernel_builder, "check-config", tmp_path])
    assert result.returncode == 1
    assert result.stderr == f'kernel-builder: error: no build.toml in "{tmp_path}"\n'


def test_defaults_to_the_current_directory(kernel_builder: Path, tmp_path: Path):
    (tmp_path / "build.toml").write_text(V5_MINIMAL)
    result = run([kernel_builder, "check-config"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "build.toml: valid (edition 5)\n"
