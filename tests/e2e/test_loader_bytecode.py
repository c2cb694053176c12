# SPDX-License-Identifier: Apache-2.0
"""The loader's own bytecode cache (python/kernelhub/_bytecode.py): a variant's modules are
compiled from their sources, and the code objects are kept in this user's state folder under
the hash of what was compiled, so a later process compiles nothing unless a source changed.

Each load runs in a fresh interpreter with its own XDG_STATE_HOME, counting the compile() calls
of kernelhub._bytecode (a module global, so the counter sees exactly the loader's compiles).
KERNELHUB_PYTHON_DIR, when set, puts a build tree's package first on sys.path.
"""
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import VENV_BIN

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv")

LOAD = textwrap.dedent("""
    import builtins, json, sys
    import kernelhub, kernelhub._bytecode as cache
    compiled = []
    def counting_compile(source, path, *args, **kwargs):
        compiled.append(path)
        return builtins.compile(source, path, *args, **kwargs)
    cache.compile = counting_compile
    kernel = kernelhub.get_local_kernel(sys.argv[1])
    print(json.dumps({"answer": kernel.answer(), "compiled": sorted(compiled)}))
""")


def make_variant(root: Path, answer: int = 42) -> Path:
    """A pure-Python variant: __init__.py importing a submodule, with a metadata id."""
    variant = root / "tiny"
    variant.mkdir(parents=True, exist_ok=True)
    (variant / "metadata.json").write_text(json.dumps({
        "name": "tiny", "id": "_tiny_bytecode_test", "version": 1, "license": "Apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text("from .helper import answer\n")
    (variant / "helper.py").write_text(f"def answer():\n    return {answer}\n")
    return variant


def load(variant: Path, state: Path, **env) -> dict:
    full_env = dict(os.environ, XDG_STATE_HOME=str(state), **env)
    full_env.pop("KERNELHUB_BYTECODE_CACHE", None)
    full_env.update(env)
    extra = os.environ.get("KERNELHUB_PYTHON_DIR")
    if extra:
        full_env["PYTHONPATH"] = extra + os.pathsep + full_env.get("PYTHONPATH", "")
    result = subprocess.run([str(PYTHON), "-c", LOAD, str(variant)], capture_output=True,
                            text=True, timeout=300, env=full_env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def cache_folder(state: Path) -> Path:
    return state / "kernelhub" / "bytecode" / sys.implementation.cache_tag


def variant_sources(result: dict, variant: Path) -> list[str]:
    return [path for path in result["compiled"] if path.startswith(str(variant))]


def test_a_second_process_compiles_nothing(tmp_path):
    variant = make_variant(tmp_path)
    state = tmp_path / "state"
    first = load(variant, state)
    assert first["answer"] == 42
    assert variant_sources(first, variant) == [str(variant / "__init__.py"),
                                               str(variant / "helper.py")]
    second = load(variant, state)
    assert second == {"answer": 42, "compiled": []}
    folder = cache_folder(state)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    kept = list(folder.iterdir())
    assert kept and all(stat.S_IMODE(file.stat().st_mode) == 0o600 for file in kept)
    # Nothing was written into the variant: the cache lives in the state folder only.
    assert sorted(p.name for p in variant.iterdir()) == ["__init__.py", "helper.py",
                                                         "metadata.json"]


def test_a_changed_source_is_compiled_again(tmp_path):
    variant = make_variant(tmp_path)
    state = tmp_path / "state"
    load(variant, state)
    make_variant(tmp_path, answer=7)  # the same path, other bytes
    changed = load(variant, state)
    assert changed["answer"] == 7
    assert variant_sources(changed, variant) == [str(variant / "helper.py")]


def test_a_damaged_kept_file_is_compiled_again(tmp_path):
    variant = make_variant(tmp_path)
    state = tmp_path / "state"
    load(variant, state)
    for file in cache_folder(state).iterdir():
        file.write_bytes(file.read_bytes()[:20])  # header kept, code cut off
    again = load(variant, state)
    assert again["answer"] == 42
    assert len(variant_sources(again, variant)) == 2


def test_a_folder_others_can_write_is_not_used(tmp_path):
    """Whoever may write the folder could plant code under a source's hash: it is ignored."""
    variant = make_variant(tmp_path)
    state = tmp_path / "state"
    load(variant, state)
    folder = cache_folder(state)
    folder.chmod(0o777)
    for file in folder.iterdir():  # what a stranger planted: another answer under each key
        planted = file.read_bytes().replace(b"\x2a", b"\x07")  # 42 -> 7 in the constants
        file.write_bytes(planted)
    opened = load(variant, state)
    assert opened["answer"] == 42
    assert len(variant_sources(opened, variant)) == 2


def test_the_cache_can_be_turned_off(tmp_path):
    variant = make_variant(tmp_path)
    state = tmp_path / "state"
    for _ in range(2):
        off = load(variant, state, KERNELHUB_BYTECODE_CACHE="0")
        assert off["answer"] == 42 and len(variant_sources(off, variant)) == 2
    assert not (state / "kernelhub" / "bytecode").exists()
