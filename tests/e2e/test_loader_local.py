# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.get_local_kernel` against the REFERENCE `kernels.get_local_kernel` on the same
variants our builder built: the same variant chosen, the same module name (the metadata id),
the same results; LOCAL_KERNELS parsed as the reference's own function parses it; two builds of
one kernel side by side; relative imports inside a kernel; and the older layouts the reference
refuses, which we load under a path-derived name with a warning.

Ours and the reference each run in a fresh interpreter of the venv (both import torch and keep
process-wide registries). KERNELHUB_PYTHON_DIR, when set, is put first on sys.path so a build
tree's package (<build>/python) is tested instead of the installed one.
"""
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"
EXAMPLES = REPO_ROOT / "examples"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)


def python(script: str, *, env=None, check=True):
    """Runs `script` in the venv's Python; returns the JSON on its last stdout line."""
    full_env = dict(os.environ, **(env or {}))
    extra = os.environ.get("KERNELHUB_PYTHON_DIR")
    if extra:
        full_env["PYTHONPATH"] = extra + os.pathsep + full_env.get("PYTHONPATH", "")
    result = subprocess.run([str(PYTHON), "-c", textwrap.dedent(script)], capture_output=True,
                            text=True, timeout=300, env=full_env)
    if check:
        assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if lines else None), result


def build(kernel_builder, src: Path, dest: Path, unique_id: str) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("build"))
    toml = dest / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    run([kernel_builder, "build", dest, "--python", PYTHON, "--unique-id", unique_id,
         "--skip-checks"], check=True)
    return dest


@pytest.fixture(scope="module")
def built(kernel_builder, tmp_path_factory):
    """relu twice (two ids) and silu-and-mul (noarch), cpu only, built once per module."""
    root = tmp_path_factory.mktemp("loader")
    return {
        "relu_a": build(kernel_builder, EXAMPLES / "relu", root / "relu-a", "l1a"),
        "relu_b": build(kernel_builder, EXAMPLES / "relu", root / "relu-b", "l1b"),
        "silu": build(kernel_builder, EXAMPLES / "silu-and-mul", root / "silu", "l1s"),
    }


def load_report(package: str, path: Path, call: str) -> dict:
    """Loads `path` with `package`'s get_local_kernel (backend cpu) and reports the module."""
    out, _ = python(f"""
        import json, sys, torch
        from pathlib import Path
        from {package} import get_local_kernel
        m = get_local_kernel(Path({str(path)!r}), backend="cpu")
        x = torch.linspace(-2, 2, 16).reshape(2, 8)
        result = {call}
        print(json.dumps({{"name": m.__name__, "file": m.__file__,
                          "in_sys_modules": sys.modules.get(m.__name__) is m,
                          "result": result.flatten().tolist()}}))
    """)
    return out


CALLS = {
    "relu_a": "m.relu(x)",
    "silu": "m.silu_and_mul(x)",
}


@pytest.mark.parametrize("kernel", ["relu_a", "silu"])
@pytest.mark.parametrize("layout", ["repo", "build", "variant"])
def test_same_variant_module_and_results_as_reference(built, kernel, layout):
    repo = built[kernel]
    [variant] = [p for p in (repo / "build").iterdir() if not p.name.startswith(".")]
    path = {"repo": repo, "build": repo / "build", "variant": variant}[layout]
    ours = load_report("kernelhub", path, CALLS[kernel])
    theirs = load_report("kernels", path, CALLS[kernel])
    assert ours == theirs
    assert ours["in_sys_modules"]
    assert ours["name"] == json.loads((variant / "metadata.json").read_text())["id"]


def test_two_builds_side_by_side(built):
    out, _ = python(f"""
        import json, sys, torch
        from pathlib import Path
        import kernelhub
        a = kernelhub.get_local_kernel({str(built["relu_a"])!r}, backend="cpu")
        b = kernelhub.get_local_kernel({str(built["relu_b"])!r}, backend="cpu")
        again = kernelhub.get_local_kernel({str(built["relu_a"])!r}, backend="cpu")
        x = torch.randn(64)
        ra, rb = a.relu(x), b.relu(x)
        loaded = kernelhub.get_loaded_kernels()
        print(json.dumps({{
            "names": [a.__name__, b.__name__], "same_again": again is a,
            "equal": bool(torch.equal(ra, torch.relu(x)) and torch.equal(rb, torch.relu(x))),
            "ops": [hasattr(torch.ops, a.__name__), hasattr(torch.ops, b.__name__)],
            "loaded": [(k.module_name, k.metadata.name, k.repo_info) for k in loaded]}}))
    """)
    a, b = out["names"]
    assert a != b and a.endswith("_l1a") and b.endswith("_l1b")
    assert out["same_again"] and out["equal"] and out["ops"] == [True, True]
    assert out["loaded"] == [[a, "relu", None], [b, "relu", None]]


LOCAL_KERNELS_CASES = [
    "org/a=/p/a", "org/a=/p/a:org/b=/p/b", "a=/x=y", "a=/1:b=/2:a=/3", "=", "a=", "=/p",
    "", "broken", "a=/x:", "a=/x::b=/y", "a=/x:b", " a = /x ",
]


def test_local_kernels_parsing_matches_reference():
    script = f"""
        import json
        from pathlib import Path
        from {{package}} import {{func}} as parse
        out = []
        for text in {LOCAL_KERNELS_CASES!r}:
            try:
                out.append({{{{k: str(v) for k, v in parse(text).items()}}}})
            except ValueError as e:
                out.append("ValueError: " + str(e))
        print(json.dumps(out))
    """
    ours, _ = python(script.format(package="kernelhub", func="parse_local_kernels"))
    theirs, _ = python(script.format(package="kernels.load",
                                     func="_parse_local_kernel_overrides"))
    assert ours == theirs
    assert any(isinstance(item, str) for item in ours), "some cases must be errors"


def test_local_kernels_override_in_get_kernel(built, tmp_path):
    out, _ = python("""
        import json, kernelhub
        m = kernelhub.get_kernel("me/relu", version=1, backend="cpu")
        try:
            kernelhub.get_kernel("me/other", version=1, backend="cpu")
            hub = "loaded"
        except ValueError as e:
            hub = str(e)
        print(json.dumps([m.__name__, hub]))
    """, env={"LOCAL_KERNELS": f"me/silu=/nowhere:me/relu={built['relu_b']}",
              "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")})
    assert out[0].endswith("_l1b")
    # Not overridden: the Hub path, offline with an empty cache, says so.
    assert "me/other" in out[1] and "offline" in out[1], out[1]


def fake_variant(dir: Path, kernel_id: str, backend="cpu"):
    dir.mkdir(parents=True)
    (dir / "metadata.json").write_text(json.dumps({
        "name": "relu", "id": kernel_id, "version": 1, "license": "MIT",
        "python-depends": [], "backend": {"type": backend}}))
    (dir / "__init__.py").write_text("")


def test_no_fitting_variant_gives_the_reference_error(tmp_path):
    fake_variant(tmp_path / "build" / "torch210-cxx11-cu128-x86_64-linux", "_relu_c", "cuda")
    fake_variant(tmp_path / "build" / "torch-cuda", "_relu_n", "cuda")
    script = f"""
        import json
        from pathlib import Path
        from {{package}} import get_local_kernel
        try:
            get_local_kernel(Path({str(tmp_path)!r}), backend="cpu")
        except FileNotFoundError as e:
            print(json.dumps(str(e)))
    """
    ours, _ = python(script.format(package="kernelhub"))
    theirs, _ = python(script.format(package="kernels"))
    assert ours == theirs
    assert ours.startswith(f"Cannot find a build variant for this system in {tmp_path}")


def test_trace_for_local_paths(tmp_path, built):
    out, _ = python(f"""
        import json, kernelhub
        trace = kernelhub.get_local_kernel_variants({str(built["relu_a"])!r}, backend="cpu")
        print(json.dumps([[type(d).__name__, d.variant] for d in trace]))
    """)
    [variant] = [p.name for p in (built["relu_a"] / "build").iterdir() if p.name[0] != "."]
    assert out == [["VariantAccepted", variant]]


def test_relative_imports_and_copies_under_their_ids(tmp_path):
    for kernel_id, value in (("_rel_cpu_one", 1), ("_rel_cpu_two", 2)):
        variant = tmp_path / kernel_id / "build" / "torch-cpu"
        fake_variant(variant, kernel_id)
        (variant / "__init__.py").write_text("from .ops import value\nfrom . import layers\n")
        (variant / "ops.py").write_text(f"from ._helpers import base\nvalue = base + {value}\n")
        (variant / "_helpers.py").write_text("base = 40\n")
        (variant / "layers").mkdir()
        (variant / "layers" / "__init__.py").write_text("from ..ops import value as v\n")
    out, _ = python(f"""
        import json, sys, kernelhub
        one = kernelhub.get_local_kernel({str(tmp_path / "_rel_cpu_one")!r}, backend="cpu")
        two = kernelhub.get_local_kernel({str(tmp_path / "_rel_cpu_two")!r}, backend="cpu")
        print(json.dumps([one.value, two.value, one.layers.v, two.layers.v,
                          sys.modules["_rel_cpu_one.ops"].value, "_rel_cpu_two.layers" in sys.modules]))
    """)
    assert out == [41, 42, 41, 42, 41, True]


def test_python_depends_validation(tmp_path):
    variant = tmp_path / "build" / "torch-cpu"
    fake_variant(variant, "_deps_cpu_x")
    meta = json.loads((variant / "metadata.json").read_text())
    results = {}
    for depends in (["nvidia-cutlass-dsl"], ["not-a-dep"], ["helion"]):
        meta["python-depends"] = depends
        (variant / "metadata.json").write_text(json.dumps(meta))
        script = f"""
            import json
            from pathlib import Path
            from {{package}} import get_local_kernel
            try:
                get_local_kernel(Path({str(tmp_path)!r}), backend="cpu")
                print(json.dumps("ok"))
            except (ValueError, ImportError) as e:
                print(json.dumps(type(e).__name__ + ": " + str(e)))
        """
        ours, _ = python(script.format(package="kernelhub"))
        theirs, _ = python(script.format(package="kernels"))
        results[depends[0]] = ours
        assert ours == theirs, depends
    assert results["not-a-dep"].startswith("ValueError: Kernel module `relu` uses unsupported")


OLD_LAYOUTS = {
    # metadata.json from before kernel ids
    "no-id": {"build/torch-cpu/metadata.json": '{"name": "relu", "python-depends": []}',
              "build/torch-cpu/__init__.py": "from ._impl import answer\n",
              "build/torch-cpu/_impl.py": "answer = 42\n"},
    # no metadata.json at all
    "no-metadata": {"build/torch-cpu/__init__.py": "from ._impl import answer\n",
                    "build/torch-cpu/_impl.py": "answer = 42\n"},
    # before flattening: build/<variant>/<name>/
    "pre-flattening": {"build/torch-cpu/relu/__init__.py": "from ._impl import answer\n",
                       "build/torch-cpu/relu/_impl.py": "answer = 42\n"},
}


@pytest.mark.parametrize("layout", sorted(OLD_LAYOUTS))
def test_old_layouts_load_with_a_warning(tmp_path, layout):
    paths = []
    for copy in ("one", "two"):
        repo = tmp_path / copy / "relu"
        for name, text in OLD_LAYOUTS[layout].items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        paths.append(str(repo))
    out, result = python(f"""
        import json, warnings, kernelhub
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mods = [kernelhub.get_local_kernel(p, backend="cpu") for p in {paths!r}]
        print(json.dumps([[m.__name__, m.answer] for m in mods] +
                         [[str(w.message) for w in caught]]))
    """)
    (name_one, answer_one), (name_two, answer_two), messages = out
    assert answer_one == answer_two == 42
    assert name_one != name_two and name_one.startswith("relu_")
    assert len([m for m in messages if "older build" in m]) == 2

    _, reference = python(f"""
        from pathlib import Path
        from kernels import get_local_kernel
        get_local_kernel(Path({paths[0]!r}), backend="cpu")
    """, check=False)
    assert reference.returncode != 0, "the reference refuses these layouts"
