# SPDX-License-Identifier: Apache-2.0
"""Layer scenarios (see layer_scenarios.py): Repositories over hand-made local kernels, locks,
kernel-depends / get_kernel_dep, and hub repositories against `kernelhub serve`."""
from __future__ import annotations

import copy
import importlib
import json
import sys
from pathlib import Path

from layer_scenarios_common import (
    KERNELIZE_MODES, attempt, describe, local, probe, scenario, stub, write,
)

# The package under test and its context: bound by layer_scenarios.main() (bind_package)
# before any scenario runs.
PKG = None
NAME = ""
ROOT = Path()
torch = None
nn = None


# ------------------------------------------------------------------------------------------
# Repositories


LOCK_COMMIT = "0123456789abcdef0123456789ABCDEF01234567"


def _write_locks(root: Path):
    good = [
        {"dependency": {"repo-id": "org/kern", "version": 1}, "lock": {"commit": LOCK_COMMIT}},
        {"dependency": {"repo-id": "org/kern", "version": 2}, "lock": {"commit": "f" * 40}},
        {"dependency": {"repo-id": "org/other", "revision": "main"},
         "lock": {"commit": "e" * 64}},
    ]
    write(root / "good.lock", json.dumps(good))
    write(root / "old.lock", json.dumps([{"repo_id": "org/kern", "sha": "a" * 40,
                                          "variants": {}}]))
    write(root / "extra.lock", json.dumps([dict(good[0], extra=1)]))
    write(root / "short.lock", json.dumps([{"dependency": {"repo-id": "org/kern", "version": 1},
                                            "lock": {"commit": "abc123"}}]))
    write(root / "both.lock", json.dumps([{"dependency": {"repo-id": "org/kern", "version": 1,
                                                          "revision": "x"},
                                           "lock": {"commit": "a" * 40}}]))
    write(root / "notjson.lock", "not json")
    write(root / "empty.lock", "[]")


@scenario()
def repositories():
    P = PKG
    out = {}
    ctor = {
        "layer_rev": lambda: P.LayerRepository("org/k", layer_name="L", revision="abc"),
        "layer_both": lambda: P.LayerRepository("org/k", layer_name="L", revision="a", version=1),
        "layer_neither": lambda: P.LayerRepository("org/k", layer_name="L"),
        "layer_positional": lambda: P.LayerRepository("org/k", "L", revision="a"),
        "layer_no_name": lambda: P.LayerRepository("org/k", revision="a"),
        "layer_kw_repo": lambda: P.LayerRepository(repo_id="org/k", layer_name="L", revision="a"),
        "local": lambda: P.LocalLayerRepository(Path("/x"), layer_name="L"),
        "local_str": lambda: P.LocalLayerRepository("/x", layer_name="L"),
        "local_positional": lambda: P.LocalLayerRepository(Path("/x"), "L"),
        "func_rev": lambda: P.FuncRepository("org/k", func_name="f", revision="abc"),
        "func_user_agent": lambda: P.FuncRepository("org/k", func_name="f", revision="a",
                                                    user_agent="x"),
        "func_both": lambda: P.FuncRepository("org/k", func_name="f", revision="a", version=1),
        "local_func": lambda: P.LocalFuncRepository(Path("/x"), func_name="f"),
        "locked": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock",
                                                  layer_name="L"),
        "locked_other": lambda: P.LockedLayerRepository("org/other", lockfile=ROOT / "good.lock",
                                                        layer_name="L"),
        "locked_func": lambda: P.LockedFuncRepository("org/kern", lockfile=ROOT / "good.lock",
                                                      func_name="f"),
        "locked_not_locked": lambda: P.LockedLayerRepository("org/none", lockfile=ROOT / "good.lock",
                                                             layer_name="L"),
        "locked_missing_file": lambda: P.LockedLayerRepository("org/kern",
                                                               lockfile=ROOT / "nope.lock",
                                                               layer_name="L"),
        "locked_old": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "old.lock",
                                                      layer_name="L"),
        "locked_extra": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "extra.lock",
                                                        layer_name="L"),
        "locked_short": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "short.lock",
                                                        layer_name="L"),
        "locked_both": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "both.lock",
                                                       layer_name="L"),
        "locked_notjson": lambda: P.LockedLayerRepository("org/kern",
                                                          lockfile=ROOT / "notjson.lock",
                                                          layer_name="L"),
        "locked_empty": lambda: P.LockedLayerRepository("org/kern", lockfile=ROOT / "empty.lock",
                                                        layer_name="L"),
        "locked_no_lockfile": lambda: P.LockedLayerRepository("org/kern", layer_name="L"),
    }
    made = {}
    for name, make in ctor.items():
        res = attempt(make)
        if res[0] == "ok":
            made[name] = res[1]
            res = ["ok", attempt(str, res[1]), type(res[1]).__name__,
                   getattr(res[1], "layer_name", None), getattr(res[1], "func_name", None)]
        out[name] = res

    def again(name):
        return ctor[name]()

    eq = {}
    for name, obj in made.items():
        other = attempt(again, name)
        if other[0] != "ok":
            continue
        other = other[1]
        eq[name] = [obj == other, hash(obj) == hash(other), obj != other]
    out["equal_copies"] = eq
    L = P.LayerRepository
    pairs = {
        "user_agent_ignored": (L("o/k", layer_name="L", revision="a", user_agent="x"),
                               L("o/k", layer_name="L", revision="a", user_agent={"y": 1})),
        "rev_vs_version": (L("o/k", layer_name="L", revision="1"), L("o/k", layer_name="L", version=1)),
        "trust_list": (L("o/k", layer_name="L", revision="a", trust_remote_code=["o/k"]),
                       L("o/k", layer_name="L", revision="a", trust_remote_code=["o/k"])),
        "trust_bool_list": (L("o/k", layer_name="L", revision="a", trust_remote_code=True),
                            L("o/k", layer_name="L", revision="a", trust_remote_code=["o/k"])),
        "path_vs_str": (P.LocalLayerRepository(Path("/x"), layer_name="L"),
                        P.LocalLayerRepository("/x", layer_name="L")),
        "local_layer_vs_func": (P.LocalLayerRepository(Path("/x"), layer_name="L"),
                                P.LocalFuncRepository(Path("/x"), func_name="L")),
        "layer_vs_local": (L("/x", layer_name="L", revision="a"),
                           P.LocalLayerRepository(Path("/x"), layer_name="L")),
        "func_vs_layer": (P.FuncRepository("o/k", func_name="L", revision="a"),
                          L("o/k", layer_name="L", revision="a")),
    }
    out["pairs"] = {k: [a == b, hash(a) == hash(b)] for k, (a, b) in pairs.items()}
    if "locked" in made and "locked_func" in made:
        out["locked_vs"] = [made["locked"] == made.get("locked_other"),
                            made["locked"] == made["locked_func"]]
    trust = ["o/k"]
    repo = L("o/k", layer_name="L", revision="a", trust_remote_code=trust)
    h = hash(repo)
    trust.append("o/z")
    out["trust_copied"] = [hash(repo) == h, repo == L("o/k", layer_name="L", revision="a",
                                                      trust_remote_code=["o/k"])]
    out["locked_attrs"] = attempt(lambda: [hasattr(made["locked"], "kernel_locks"),
                                           hasattr(made["locked"], "kernel_dep")])
    return out


@scenario()
def local_str_path():
    """DELIBERATE DIFFERENCE: a `str` repo_path. The reference fails at load time with a
    TypeError (`str / str`); kernelhub reads it as the same folder."""
    PKG.register_kernel_mapping({"RpStr": {"cpu": PKG.LocalLayerRepository(
        str(ROOT / "klayers"), layer_name="Double")}})
    PKG.register_kernel_mapping({"RpStrF": {"cpu": PKG.LocalFuncRepository(
        str(ROOT / "klayers"), func_name="triple")}})
    fn = PKG.use_kernel_forward_from_hub("RpStrF")(lambda x: x)
    host = nn.Module()
    host.f = fn
    res = attempt(lambda: PKG.kernelize(host, mode=PKG.Mode.INFERENCE, device="cpu",
                                        use_fallback=PKG.KernelizeFallback.ALL))
    return {"layer": probe("RpStr", use_fallback="ALL"),
            "func": [res if res[0] == "error" else "ok", describe(fn)]}


@scenario()
def locked_attributes():
    """The public attributes a locked repository carries (layers.md §7.4): the matched
    dependency and all locks, indexable by the dependency."""
    repo = PKG.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock", layer_name="L")
    return {
        "dep_repo_id": attempt(lambda: repo.kernel_dep.repo_id),
        "commit": attempt(lambda: repo.kernel_locks[repo.kernel_dep].commit),
        "keys": attempt(lambda: sorted(d.repo_id for d in repo.kernel_locks.keys())),
        "dep_hashable": attempt(lambda: hash(repo.kernel_dep) == hash(repo.kernel_dep)),
    }


@scenario()
def local_repositories_load():
    """LocalLayerRepository and LocalFuncRepository loading real (hand-made) kernels."""
    out = {}
    for name in ("Double", "NoBackward", "Compilable", "CompilableNoBackward"):
        layer = f"Lr{name}"
        PKG.register_kernel_mapping({layer: {"cpu": local("klayers", name)}})
        out[name] = {km: probe(layer, kmode=km, use_fallback=fb)
                     for km in KERNELIZE_MODES for fb in (True, False)}
    # the variant folder itself and the build folder are accepted as repo_path
    for case, path in (("build", ROOT / "klayers" / "build"),
                       ("variant", ROOT / "klayers" / "build" / "torch-universal")):
        PKG.register_kernel_mapping({f"Lp{case}": {"cpu": PKG.LocalLayerRepository(
            path, layer_name="Double")}})
        out[case] = probe(f"Lp{case}", use_fallback=False)
    return out


@scenario()
def locked_deepcopy():
    """DELIBERATE DIFFERENCE: an inheriting use_kernel_mapping with a locked repository in the
    mapping. The reference fails to deep-copy KernelLocks; kernelhub copies it."""
    locked = PKG.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock", layer_name="L")
    PKG.register_kernel_mapping({"LdL": {"cpu": locked}})
    inner = stub("ld_inner", factor=2.0)

    def enter():
        with PKG.use_kernel_mapping({"LdInner": {"cpu": inner}}):
            return probe("LdInner", use_fallback=False)

    def enter_no_inherit():
        with PKG.use_kernel_mapping({"LdInner": {"cpu": inner}}, inherit_mapping=False):
            return probe("LdInner", use_fallback=False)

    return {"inherit": attempt(enter), "no_inherit": attempt(enter_no_inherit),
            "after": probe("LdInner", use_fallback=False),
            "deepcopy": attempt(lambda: str(copy.deepcopy(locked)) == str(locked)),
            "deepcopy_eq": attempt(lambda: copy.deepcopy(locked) == locked)}


@scenario()
def lock_from_caller_package():
    """DELIBERATE DIFFERENCE: LockedLayerRepository without `lockfile`, called from an installed
    package whose metadata ships kernels.lock. The reference looks in its own distribution."""
    site = ROOT / "site"
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    mod = importlib.import_module("khlockuser")
    return {"layer": attempt(lambda: str(mod.make_layer(PKG))),
            "func": attempt(lambda: str(mod.make_func(PKG)))}


def make_lock_user_package(root: Path):
    site = root / "site"
    write(site / "khlockuser" / "__init__.py",
          "def make_layer(pkg):\n"
          "    return pkg.LockedLayerRepository('org/kern', layer_name='L')\n\n\n"
          "def make_func(pkg):\n"
          "    return pkg.LockedFuncRepository('org/kern', func_name='f')\n")
    dist = site / "khlockuser-0.1.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: khlockuser\nVersion: 0.1\n")
    write(dist / "top_level.txt", "khlockuser\n")
    write(dist / "RECORD", "khlockuser/__init__.py,,\n")
    write(dist / "kernels.lock", (root / "good.lock").read_text())


@scenario()
def get_kernel_dep_outside_loading():
    return [attempt(PKG.get_kernel_dep, "org/dep"), attempt(PKG.get_kernel_dep, "")]


# ------------------------------------------------------------------------------------------
# kernel-depends and get_kernel_dep (group "deps": LOCAL_KERNELS set by the test)

DEP_KERNEL_INIT = """
import importlib, os, sys

_pkg = importlib.import_module(%(pkg)s)


def _try(repo_id):
    try:
        module = _pkg.get_kernel_dep(repo_id)
        return ["ok", module.__name__, getattr(module, "VALUE", None),
                sys.modules.get(module.__name__) is module]
    except Exception as exc:
        return ["error", type(exc).__name__, str(exc)]


AT_IMPORT = {name: _try(name) for name in %(names)r}
VALUE = %(value)r
from . import layers


def later():
    return _try(%(first)r)
"""

SCALED_LAYERS = """
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        return x * 6
"""


def dep_kernel(root, name, depends, value, layers="", pkg='os.environ["KH_LAYER_DIFF_PKG"]'):
    """A local kernel whose import records what get_kernel_dep gives for its dependencies,
    a transitive one and an unknown one (AT_IMPORT), and whose `later()` asks again."""
    variant = root / name / "build" / "torch-universal"
    kid = f"_{name}_layer_diff"
    write(variant / "metadata.json", json.dumps({
        "name": name, "id": kid, "version": 1, "license": "apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"},
        "kernel-depends": [{"repo-id": d, "version": 1} for d in depends]}))
    names = list(depends) + ["org/kdep2", "org/none"]
    write(variant / "__init__.py", DEP_KERNEL_INIT % {
        "names": names, "value": value, "pkg": pkg, "first": depends[0] if depends else "org/none"})
    write(variant / "layers.py", layers or "")


def make_hub_dep_kernels(root: Path):
    """khtrusted/hkuser depends on khtrusted/hkdep (version 1); published by the hub test."""
    dep_kernel(root, "hkdep", [], "hdep")
    dep_kernel(root, "hkuser", ["khtrusted/hkdep"], "huser", layers=SCALED_LAYERS)


def make_dep_kernels(root: Path):
    def kernel(*args, **kwargs):
        dep_kernel(root, *args, **kwargs)

    kernel("kdep2", [], "dep2")
    kernel("kdep", ["org/kdep2"], "dep")
    kernel("kuser", ["org/kdep"], "user", layers="""
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        return x * 6
""")
    # a kernel written for the reference: it calls `kernels.get_kernel_dep` by name
    kernel("kuref", ["org/kdep"], "uref", pkg="'kernels'", layers="""
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        return x * 6
""")
    kernel("kcyc1", ["org/kcyc2"], "c1")
    kernel("kcyc2", ["org/kcyc1"], "c2")
    kernel("kmissing", ["org/kabsent"], "m")


@scenario("deps")
def kernel_depends():
    import os

    os.environ["KH_LAYER_DIFF_PKG"] = NAME
    out = {"outside": attempt(PKG.get_kernel_dep, "org/kdep")}
    PKG.register_kernel_mapping({"DpL": {"cpu": local("kuser", "Scaled")}})
    out["kernelize"] = probe("DpL", use_fallback=False)
    user = sys.modules.get("_kuser_layer_diff")
    out["at_import"] = getattr(user, "AT_IMPORT", None)
    out["later"] = attempt(lambda: user.later())
    dep = sys.modules.get("_kdep_layer_diff")
    out["dep_at_import"] = getattr(dep, "AT_IMPORT", None)
    out["dep2_at_import"] = getattr(sys.modules.get("_kdep2_layer_diff"), "AT_IMPORT", None)
    out["direct"] = attempt(lambda: PKG.get_local_kernel(ROOT / "kuser").VALUE)
    for name in ("kcyc1", "kmissing"):
        PKG.register_kernel_mapping({f"Dp{name}": {"cpu": local(name, "Nothing")}})
        out[name] = probe(f"Dp{name}", use_fallback="ALL")
    return out


@scenario("deps")
def hub_repositories_offline():
    """Hub repositories with HF_HUB_OFFLINE=1: LOCAL_KERNELS serves a `revision=` repository;
    `version=` still resolves against the (empty) cache; a locked one needs the cache."""
    P = PKG
    out = {}
    repos = {
        "layer_rev_local": P.LayerRepository("org/klayers", layer_name="Double", revision="main"),
        "layer_version_local": P.LayerRepository("org/klayers", layer_name="Double", version=1),
        "layer_rev_absent": P.LayerRepository("org/kabsent", layer_name="Double", revision="main"),
        "func_rev_local": P.FuncRepository("org/klayers", func_name="triple", revision="main"),
        "locked": P.LockedLayerRepository("org/kern", lockfile=ROOT / "good.lock",
                                          layer_name="Double"),
    }
    for name, repo in repos.items():
        out[name + " str"] = attempt(str, repo)
        layer = f"Ho_{name}"
        P.register_kernel_mapping({layer: {"cpu": repo}})
        out[name] = [probe(layer, use_fallback=fb) for fb in (False, "ALL")]
    return out


@scenario("deps", interop=True)
def kernel_depends_reference_import():
    """A kernel that imports the reference's `get_kernel_dep` (kernels call it by name),
    loaded by the package under test."""
    PKG.register_kernel_mapping({"DpRef": {"cpu": local("kuref", "Scaled")}})
    out = {"kernelize": probe("DpRef", use_fallback=False)}
    out["at_import"] = getattr(sys.modules.get("_kuref_layer_diff"), "AT_IMPORT", None)
    return out


# ------------------------------------------------------------------------------------------
# Hub repositories against `kernelhub serve` (group "hub": HF_ENDPOINT set by the test, which
# published ROOT/klayers as khtrusted/klayers (branches v1, v2; the org is trusted) and as
# khuntrusted/klayers (v1), and wrote ROOT/hub.lock pinning khtrusted/klayers v1)


@scenario("hub")
def hub_layer_repositories():
    P = PKG
    trusted, untrusted = "khtrusted/klayers", "khuntrusted/klayers"
    commit = json.loads((ROOT / "hub.lock").read_text())[0]["lock"]["commit"]
    repos = {
        "v1": lambda: P.LayerRepository(trusted, layer_name="Double", version=1),
        "v2": lambda: P.LayerRepository(trusted, layer_name="Compilable", version=2),
        "v3": lambda: P.LayerRepository(trusted, layer_name="Double", version=3),
        "branch": lambda: P.LayerRepository(trusted, layer_name="Double", revision="v1"),
        "commit": lambda: P.LayerRepository(trusted, layer_name="Double", revision=commit),
        "missing_layer": lambda: P.LayerRepository(trusted, layer_name="Nope", version=2),
        "untrusted": lambda: P.LayerRepository(untrusted, layer_name="Double", version=1),
        "untrusted_listed": lambda: P.LayerRepository(untrusted, layer_name="Double", version=1,
                                                      trust_remote_code=[untrusted]),
        "untrusted_true": lambda: P.LayerRepository(untrusted, layer_name="Double", revision="v1",
                                                    trust_remote_code=True),
        "missing_repo": lambda: P.LayerRepository("khtrusted/absent", layer_name="Double",
                                                  revision="main"),
        "missing_revision": lambda: P.LayerRepository(trusted, layer_name="Double",
                                                      revision="no-such-branch"),
        "func": lambda: P.FuncRepository(trusted, func_name="triple", version=1),
        "locked": lambda: P.LockedLayerRepository(trusted, lockfile=ROOT / "hub.lock",
                                                  layer_name="Double"),
        "locked_func": lambda: P.LockedFuncRepository(trusted, lockfile=ROOT / "hub.lock",
                                                      func_name="triple"),
    }
    # kernel-depends from the Hub; a lock must pin every node of the tree
    import os

    os.environ["KH_LAYER_DIFF_PKG"] = NAME
    user = "khtrusted/hkuser"
    repos.update({
        "dep_tree": lambda: P.LayerRepository(user, layer_name="Scaled", version=1),
        "dep_locked_root_only": lambda: P.LockedLayerRepository(
            user, lockfile=ROOT / "hub-root-only.lock", layer_name="Scaled"),
        "dep_locked_tree": lambda: P.LockedLayerRepository(
            user, lockfile=ROOT / "hub-tree.lock", layer_name="Scaled"),
    })
    out = {}
    for name, make in repos.items():
        repo = make()
        out[name + " str"] = attempt(str, repo)
        layer = f"Hb_{name}"
        P.register_kernel_mapping({layer: {"cpu": repo}})
        out[name] = [probe(layer, kmode=km, use_fallback=fb)
                     for km, fb in (("INFERENCE", False), ("INFERENCE", "ALL"),
                                    ("INFERENCE|TORCH_COMPILE", False))]
    out["hkuser_at_import"] = getattr(sys.modules.get("_hkuser_layer_diff"), "AT_IMPORT", None)
    return out
