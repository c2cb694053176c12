# SPDX-License-Identifier: Apache-2.0
"""The layer API of `kernelhub` against the reference `kernels` 0.17.2, differentially.

layer_scenarios.py runs the scenarios, which live in layer_scenarios_<area>.py (Mode and
KernelizeFallback flags, Device and the capability properties, mapping registration and contexts,
the mode-selection and failure matrices of kernelize, kernel-layer validation, small models with
classes and functions, CUDA and ROCm capability ranges on simulated devices, repositories over
hand-made local kernels, locks, DISABLE_KERNEL_MAPPING). Each group of scenarios runs once per
package in a fresh interpreter of the venv (PYTHONHASHSEED=0, so hashes compare); the results
(returned values, the forward each module got, error classes and texts, log records, Python
warnings) must be equal, except:

- the signature table, where our extra keyword-only parameters are allowed when listed in
  OUR_EXTRA_KEYWORD_ONLY (any other difference fails);
- the reference bugs kernelhub fixes on purpose (layers.md, issue 11, docs/moving-from-kernels.md),
  each with its own test that asserts the reference's behaviour and ours side by side: the lock
  lookup by caller package, deep copies of locked repositories, ties between capability ranges,
  and `str` repository paths.

A package's own subclass of a public exception compares as that exception (issue 11 allows a
subclass of huggingface_hub's RepositoryNotFoundError); the texts must still be equal.

Top-level `register_kernel_mapping` keeps the reference's process-wide default (transformers
relies on it), so the threading scenario is compared exactly.

KERNELHUB_PYTHON_DIR, when set, is put first on sys.path so a build tree's package is tested.
"""
import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import VENV_BIN

sys.path.insert(0, str(Path(__file__).resolve().parent))
import layer_scenarios  # noqa: E402
import layer_scenarios_common  # noqa: E402
import layer_scenarios_repos  # noqa: E402

PYTHON = VENV_BIN / "python"
SCRIPT = Path(__file__).resolve().with_name("layer_scenarios.py")
REFERENCE = "kernels"
OURS = "kernelhub"

# Asked of the venv's interpreter: a worktree's .venv reaches the main tree's packages through
# a .pth file, so `kernels` need not be in its own site-packages.
_REFERENCE_INSTALLED = PYTHON.exists() and subprocess.run(
    [str(PYTHON), "-c", "import importlib.util as u, sys; "
     "sys.exit(u.find_spec('kernels') is None)"], capture_output=True).returncode == 0
pytestmark = pytest.mark.skipif(not PYTHON.exists() or not _REFERENCE_INSTALLED,
                                reason="needs the .venv with torch and kernels 0.17.2")

# Keyword-only parameters kernelhub adds to a reference callable ("top.<name>" or
# "layer.<name>"); any parameter difference not listed here fails the signature table.
OUR_EXTRA_KEYWORD_ONLY: dict = {
    # refuse a variant without a valid Sigstore signature before importing it, and the team
    # keys a keyed signature may come from (issue 14)
    "top.get_kernel": {"require_signature", "trusted_keys"},
}

# Reference names whose signature `inspect.signature` cannot read (builtin Rust types).
REFERENCE_WITHOUT_SIGNATURE = {"top.Metadata"}

# Scenarios with their own assertions below (deliberate differences, the signature table).
DELIBERATE = {"capability_ties", "locked_deepcopy", "lock_from_caller_package", "local_str_path"}


def _env(extra=None, workdir=None):
    env = dict(os.environ, PYTHONHASHSEED="0")
    if workdir is not None:
        env["HF_HOME"] = str(workdir / "hf-home")  # an empty cache: offline loads miss
        env["HF_HUB_CACHE"] = str(workdir / "hf-home" / "hub")
    env.pop("DISABLE_KERNEL_MAPPING", None)
    env.pop("LOCAL_KERNELS", None)
    env["HF_HUB_OFFLINE"] = "1"  # nothing here may reach the network
    if os.environ.get("KERNELHUB_PYTHON_DIR"):
        env["PYTHONPATH"] = os.environ["KERNELHUB_PYTHON_DIR"] + os.pathsep + env.get(
            "PYTHONPATH", "")
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run_group(package: str, group: str, workdir: Path, extra_env=None) -> dict:
    result = subprocess.run(
        [str(PYTHON), str(SCRIPT), package, group, str(workdir)], capture_output=True,
        text=True, timeout=180, env=_env(extra_env, workdir), stdin=subprocess.DEVNULL)
    assert result.returncode == 0, (
        f"scenarios of group {group!r} under {package} failed (rc {result.returncode}):\n"
        f"{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


class Results:
    """Runs each (package, group) once per module; both packages share the kernels folder, so
    paths in messages are equal."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.cache = {}

    def get(self, package: str, group: str, extra_env=None) -> dict:
        key = (package, group)
        if key not in self.cache:
            self.cache[key] = run_group(package, group, self.workdir, extra_env)
        return self.cache[key]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return Results(tmp_path_factory.mktemp("layer-diff"))


def differences(ref, ours, path="", limit=12):
    """The first `limit` places where two JSON values differ, as readable lines."""
    out = []

    def walk(a, b, where):
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in list(a) + [k for k in b if k not in a]:
                if key not in b:
                    out.append(f"{where}/{key}: only in reference: {a[key]!r:.300}")
                elif key not in a:
                    out.append(f"{where}/{key}: only in kernelhub: {b[key]!r:.300}")
                else:
                    walk(a[key], b[key], f"{where}/{key}")
        elif where.endswith("/logs") and a != b:
            # log records as a diff: a missing or extra record is one line, not a cascade
            lines = difflib.unified_diff([" ".join(r)[:300] for r in a],
                                         [" ".join(r)[:300] for r in b],
                                         "reference", "kernelhub", n=1, lineterm="")
            out.append(f"{where}:\n    " + "\n    ".join(list(lines)[2:40]))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            out.append(f"{where}:\n    reference: {a!r:.600}\n    kernelhub: {b!r:.600}")

    walk(ref, ours, path)
    return out


# Deliberate differences inside otherwise equal scenarios: (scenario, path prefix) -> why.
# For these paths the values are not compared; each gets its own check of what ours does.
DELIBERATE_PATHS = {
    ("repositories", "/result/locked_old"):
        "ours also reads the legacy lock format (`kernelhub lock --legacy` and older kernels "
        "releases write it)",
    ("repositories", "/result/equal_copies/locked_old"): "the same legacy lock",
    **{("repositories", f"/result/locked_{case}[2]"):
       "lock errors name the file and the JSON path instead of serde's line/column"
       for case in ("extra", "short", "both", "notjson")},
    **{("hub_layer_repositories", f"/result/missing_{what}[{i}][2]"):
       "Hub errors carry huggingface_hub's class (compared) with our request's text"
       for what in ("repo", "revision") for i in range(3)},
}


def _deliberate(name: str, where: str) -> bool:
    return any(scenario == name and where.startswith(prefix)
               for scenario, prefix in DELIBERATE_PATHS)


def assert_same(ref: dict, ours: dict, name: str):
    diff = [line for line in differences(ref, ours, limit=200)
            if not _deliberate(name, line.split(":", 1)[0])]
    assert not diff, f"{name}: kernelhub differs from kernels 0.17.2:\n" + "\n".join(diff[:12])


def _value(result: dict, where: str):
    """The value at a /a/b[i] path of a scenario result."""
    value = result
    for part in where.strip("/").split("/"):
        key, *indexes = part.replace("]", "").split("[")
        value = value[key]
        for index in indexes:
            value = value[int(index)]
    return value


def assert_deliberate(ours: dict, name: str):
    """What ours does where a deliberate difference applies: a legacy lock loads, lock errors
    are ValueErrors naming the lock file, Hub errors keep their class and name the repository."""
    for scenario, prefix in DELIBERATE_PATHS:
        if scenario != name:
            continue
        value = _value(ours, prefix)
        if prefix == "/result/locked_old":
            assert value[0] == "ok", value
        elif prefix.startswith("/result/locked_"):
            assert ".lock" in value, value
        elif prefix.startswith("/result/missing_"):
            assert "not found" in value and "khtrusted/" in value, value


def scenarios(group):
    return [n for n, (g, _) in layer_scenarios.SCENARIOS.items()
            if g == group and n not in DELIBERATE]


@pytest.mark.parametrize("name", scenarios("main"))
def test_same_as_reference(results, name):
    ref = results.get(REFERENCE, "main")[name]
    ours = results.get(OURS, "main")[name]
    assert "scenario crashed" not in json.dumps(ref["result"])[:40], ref["result"]
    assert_same(ref, ours, name)
    assert_deliberate(ours, name)


def test_disable_kernel_mapping(results):
    """DISABLE_KERNEL_MAPPING=1: original forwards, no lookup, no error, no log."""
    env = {"DISABLE_KERNEL_MAPPING": "1"}
    ref = results.get(REFERENCE, "disable", env)["disabled_mapping"]
    ours = results.get(OURS, "disable", env)["disabled_mapping"]
    assert ref["result"]["False"][0][0] == "orig:Orig", ref  # the scenario does test something
    assert_same(ref, ours, "disabled_mapping")


def _deps_env(workdir: Path) -> dict:
    names = ("kdep", "kdep2", "kcyc1", "kcyc2", "klayers")
    return {"LOCAL_KERNELS": ":".join(f"org/{n}={workdir / n}" for n in names)}


def test_kernel_depends(results):
    """kernel-depends of local kernels through LOCAL_KERNELS: get_kernel_dep during the import
    (direct, transitive, unknown), after it, outside loading; a cycle; an unresolvable one."""
    env = _deps_env(results.workdir)
    ref = results.get(REFERENCE, "deps", env)["kernel_depends"]
    ours = results.get(OURS, "deps", env)["kernel_depends"]
    assert ref["result"]["at_import"]["org/kdep"][0] == "ok", ref
    assert_same(ref, ours, "kernel_depends")


def test_hub_repositories_offline(results):
    """Layer/Func/Locked Hub repositories offline: LOCAL_KERNELS with `revision=`, version
    resolution against an empty cache, a locked repository missing from the cache."""
    env = _deps_env(results.workdir)
    ref = results.get(REFERENCE, "deps", env)["hub_repositories_offline"]
    ours = results.get(OURS, "deps", env)["hub_repositories_offline"]
    assert ref["result"]["layer_rev_local"][0][0].endswith("Double.forward"), ref
    assert_same(ref, ours, "hub_repositories_offline")


def test_kernel_depends_kernel_calls_reference_get_kernel_dep(results):
    """A kernel written for the reference calls `kernels.get_kernel_dep` while it is imported;
    loaded through kernelhub, that call must see its dependencies too (layers.md §9.3)."""
    env = _deps_env(results.workdir)
    ref = results.get(REFERENCE, "deps", env)["kernel_depends_reference_import"]
    ours = results.get(OURS, "deps", env)["kernel_depends_reference_import"]
    assert ref["result"]["at_import"]["org/kdep"][0] == "ok", ref
    assert_same(ref, ours, "kernel_depends_reference_import")


HUB_CONFIG = "[organizations.khtrusted]\ntrustedKernelPublisher = true\n"


def test_hub_repositories(kernelhub_bin, tmp_path):
    """Layer/Func/Locked repositories against `kernelhub serve`: versions (the newer-version
    warning, a missing version), branches and commits, publisher trust and trust_remote_code, a
    missing repository, revision and layer, locks. Each package gets a fresh cache."""
    from hub_cache_support import publish

    root = tmp_path / "hub-root"
    root.mkdir()
    (root / "config.toml").write_text(HUB_CONFIG)
    (tmp_path / "tokens").write_text("kh-layer-diff\n")
    server = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp_path / "tokens")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://"), server.stderr.read()
        work = tmp_path / "work"
        layer_scenarios_common.make_kernels(work)
        commit = publish(url, "kh-layer-diff", "khtrusted/klayers", work / "klayers",
                         branches=("v1", "v2"))
        publish(url, "kh-layer-diff", "khuntrusted/klayers", work / "klayers")
        (work / "hub.lock").write_text(json.dumps([
            {"dependency": {"repo-id": "khtrusted/klayers", "version": 1},
             "lock": {"commit": commit}}]))
        layer_scenarios_repos.make_hub_dep_kernels(work)
        locks = [{"dependency": {"repo-id": f"khtrusted/{name}", "version": 1},
                  "lock": {"commit": publish(url, "kh-layer-diff", f"khtrusted/{name}",
                                             work / name)}}
                 for name in ("hkuser", "hkdep")]
        (work / "hub-root-only.lock").write_text(json.dumps(locks[:1]))
        (work / "hub-tree.lock").write_text(json.dumps(locks))
        out = {}
        for package in (REFERENCE, OURS):
            env = {"HF_ENDPOINT": url, "HF_HUB_OFFLINE": None, "HF_HUB_DISABLE_TELEMETRY": None,
                   "HF_TOKEN": None, "NO_PROXY": "127.0.0.1,localhost",
                   "no_proxy": "127.0.0.1,localhost"}
            home = tmp_path / f"home-{package}"
            env.update({"HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub")})
            result = subprocess.run(
                [str(PYTHON), str(SCRIPT), package, "hub", str(work)], capture_output=True,
                text=True, timeout=300, env=_env(env), stdin=subprocess.DEVNULL)
            assert result.returncode == 0, result.stderr[-4000:]
            out[package] = json.loads(result.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    ref = out[REFERENCE]["hub_layer_repositories"]
    assert ref["result"]["v1"][0][0].endswith("Double.forward"), ref["result"]["v1"]
    assert ref["result"]["hkuser_at_import"]["khtrusted/hkdep"][0] == "ok", ref["result"]
    assert ref["result"]["v1 str"] == ["ok", f"`khtrusted/klayers` (revision: {commit}), layer `Double`"]
    assert_same(ref, out[OURS]["hub_layer_repositories"], "hub_layer_repositories")
    assert_deliberate(out[OURS]["hub_layer_repositories"], "hub_layer_repositories")


def test_disable_kernel_mapping_not_an_integer(tmp_path):
    """`DISABLE_KERNEL_MAPPING=true` makes importing the layer API fail as in the reference."""
    code = ("import importlib, json, sys\n"
            "try:\n"
            "    importlib.import_module(sys.argv[1]); importlib.import_module(sys.argv[1] + '.layer')\n"
            "    print(json.dumps(['ok']))\n"
            "except Exception as e:\n"
            "    print(json.dumps([type(e).__name__, str(e)]))\n")
    out = {}
    for package in (REFERENCE, OURS):
        result = subprocess.run([str(PYTHON), "-c", code, package], capture_output=True, text=True,
                                timeout=120, env=_env({"DISABLE_KERNEL_MAPPING": "true"}))
        assert result.returncode == 0, result.stderr
        out[package] = json.loads(result.stdout.strip().splitlines()[-1])
    assert out[REFERENCE] == ["ValueError", "invalid literal for int() with base 10: 'true'"]
    assert out[OURS] == out[REFERENCE]


def test_root_logger_handler(results):
    """The first kernelize reaching repository selection configures the root logger."""
    ref = results.get(REFERENCE, "rootlog")["root_logger_handler"]
    ours = results.get(OURS, "rootlog")["root_logger_handler"]
    assert ref["result"]["before"] == [] and ref["result"]["after"] == ["StreamHandler"], ref
    assert_same(ref, ours, "root_logger_handler")


# ------------------------------------------------------------------------------------------
# Signature table


def _strip_extras(key, sig):
    extras = OUR_EXTRA_KEYWORD_ONLY.get(key, set())
    params = sig["params"]
    present = {p[0] for p in params}
    missing = set(extras) - present
    assert not missing, f"{key}: OUR_EXTRA_KEYWORD_ONLY lists {sorted(missing)}, which we lack"
    for p in params:
        if p[0] in extras:
            assert p[1] == "KEYWORD_ONLY" and p[2] != "", f"{key}: extra {p[0]} must be kw-only with a default"
    return {"params": [p for p in params if p[0] not in extras], "return": sig["return"]}


def _signature_pairs(results):
    ref = results.get(REFERENCE, "signatures")["signatures"]["result"]
    ours = results.get(OURS, "signatures")["signatures"]["result"]
    assert len(ref) >= 50, ref  # every name of both __all__ lists, constructors and load()
    return ref, ours


def test_signature_table_parameters(results):
    """Names, kinds and defaults of every parameter, for every public callable of `kernels`
    and `kernels.layer`, class constructors and repositories' load()."""
    ref, ours = _signature_pairs(results)
    problems = []
    for key, ref_sig in ref.items():
        our_sig = ours.get(key, "missing")
        if key in REFERENCE_WITHOUT_SIGNATURE:
            assert "error" in ref_sig, f"{key} has a signature now: {ref_sig}"
            if our_sig == "missing":
                problems.append(f"{key}: missing in kernelhub")
            continue
        if our_sig == "missing" or "error" in our_sig:
            problems.append(f"{key}: {our_sig} in kernelhub")
            continue
        ours_cmp = _strip_extras(key, our_sig)
        strip = [[p[0], p[1], p[2]] for p in ref_sig["params"]]
        mine = [[p[0], p[1], p[2]] for p in ours_cmp["params"]]
        if strip != mine:
            problems.append(f"{key}:\n    reference: {strip}\n    kernelhub: {mine}")
    assert not problems, "signature differences:\n" + "\n".join(problems)


def _normalize_annotation(text: str) -> str:
    """Annotations as text without quotes and module paths (`kernels.layer.device.Device`,
    `'Device'` and `Device` compare equal); `types.ModuleType` prints as `module`."""
    import re

    text = text.replace("'", "").replace('"', "")
    text = re.sub(r"ForwardRef\(([^()]*)\)", r"\1", text)
    text = re.sub(r"\bType\[", "type[", text)
    text = re.sub(r"\b(?:[A-Za-z_][A-Za-z0-9_]*\.)+([A-Za-z_][A-Za-z0-9_]*)", r"\1", text)
    return text.replace("ModuleType", "module").replace(" ", "")


def test_signature_table_annotations(results):
    """Annotations (normalized text) of the same parameters and return values."""
    ref, ours = _signature_pairs(results)
    problems = []
    for key, ref_sig in ref.items():
        our_sig = ours.get(key, "missing")
        if key in REFERENCE_WITHOUT_SIGNATURE or our_sig == "missing" or "error" in our_sig:
            continue  # reported by the parameters test
        ours_cmp = _strip_extras(key, our_sig)
        a = [[p[0], _normalize_annotation(p[3])] for p in ref_sig["params"]]
        b = [[p[0], _normalize_annotation(p[3])] for p in ours_cmp["params"]]
        ra, rb = (_normalize_annotation(ref_sig["return"]), _normalize_annotation(ours_cmp["return"]))
        if a != b or ra != rb:
            problems.append(f"{key}:\n    reference: {a} -> {ra}\n    kernelhub: {b} -> {rb}")
    assert not problems, "annotation differences:\n" + "\n".join(problems)


# ------------------------------------------------------------------------------------------
# Deliberate differences: reference bugs that kernelhub fixes (layers.md §5.3, §5.4, §7.4)


def test_deliberate_difference_capability_ties(results):
    """Equal-width ranges containing the capability: the reference breaks the tie by id() of
    the mode dict (arbitrary); kernelhub picks the last registered. Re-registering a range after
    AVL rotations can duplicate the reference's node; in kernelhub the same range replaces."""
    ref = results.get(REFERENCE, "main")["capability_ties"]["result"]
    ours = results.get(OURS, "main")["capability_ties"]["result"]
    for i, label in enumerate(ref["ties"]):
        assert label in (f"kernel:ct{i}_first", f"kernel:ct{i}_second"), ref
    for i, label in enumerate(ref["duplicate"]):
        assert label in (f"kernel:cd{i}_0", f"kernel:cd{i}_new"), ref
    assert ours["ties"] == [f"kernel:ct{i}_second" for i in range(8)], ours
    assert ours["duplicate"] == [f"kernel:cd{i}_new" for i in range(8)], ours


def test_deliberate_difference_locked_deepcopy(results):
    """A locked repository in the current mapping: the reference cannot deep-copy its
    KernelLocks, so every inheriting use_kernel_mapping fails in __enter__; ours copies it."""
    ref = results.get(REFERENCE, "main")["locked_deepcopy"]["result"]
    ours = results.get(OURS, "main")["locked_deepcopy"]["result"]
    pickle_error = ["error", "builtins.TypeError", "cannot pickle 'builtins.KernelLocks' object"]
    assert ref["inherit"] == pickle_error and ref["deepcopy"] == pickle_error, ref
    inner = ["ok", ["kernel:ld_inner", [2.0, 2.0]]]
    assert ref["no_inherit"] == inner, ref
    assert ours == {"inherit": inner, "no_inherit": inner, "after": ref["after"],
                    "deepcopy": ["ok", True], "deepcopy_eq": ["ok", True]}, ours


def test_deliberate_difference_lock_from_caller_package(results):
    """LockedLayerRepository/LockedFuncRepository without `lockfile`, created in an installed
    package that ships kernels.lock: the reference inspects its own distribution and never finds
    the lock; ours skips its own frames and reads the user's package metadata."""
    ref = results.get(REFERENCE, "main")["lock_from_caller_package"]
    ours = results.get(OURS, "main")["lock_from_caller_package"]
    not_found = ["error", "builtins.ValueError",
                 "Could not find a `kernels.lock` file in the caller's package metadata. Please "
                 "lock kernels with `kernels lock <project>` and then reinstall the project."]
    assert ref["result"] == {"layer": not_found, "func": not_found}, ref
    commit = layer_scenarios_repos.LOCK_COMMIT.lower()
    assert ours["result"] == {
        "layer": ["ok", f"`org/kern` (revision: {commit}), layer `L`)"],
        "func": ["ok", f"`org/kern` (revision: {commit}), function `f`"],
    }, ours
    assert ours["logs"] == ref["logs"]  # the LockedFuncRepository deprecation line


def test_deliberate_difference_local_str_path(results):
    """LocalLayerRepository/LocalFuncRepository with a `str` path: the reference fails at load
    time (`str / str`, a TypeError no use_fallback turns into a fallback); ours loads it."""
    ref = results.get(REFERENCE, "main")["local_str_path"]["result"]
    ours = results.get(OURS, "main")["local_str_path"]["result"]
    type_error = ["error", "builtins.TypeError", "unsupported operand type(s) for /: 'str' and 'str'"]
    assert ref == {"layer": type_error, "func": [type_error, "class"]}, ref
    assert ours == {"layer": ["_klayers_layer_diff.layers:Double.forward", [2.0, 2.0]],
                    "func": ["ok", ":Func.forward"]}, ours
