# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder test` and `fill-card` on kernels we build, and the incremental rebuild.

Each compiled build costs about a minute here, so the `init` kernel is committed and built
once per module and reused: its generated test passes, an added failing `kernels_ci` test
fails the command, a test folder without `kernels_ci` tests passes (pytest's "no tests
collected"), and a second `build` of the unchanged kernel reconfigures and recompiles nothing.
Every example under examples/ with a tests/ folder is built and tested the same way; those
builds are conftest's `built_example`, made once per session and shared with the files that
test them further (test_build_cuda.py, test_build_isolation.py, ...).

fill-card is compared with the reference's behaviour: the context from our `--json` is
rendered by Jinja2 (the reference renders with minijinja, trim_blocks, as Jinja2 does with the
same options), and `__all__` is read with Python's own `ast` the way the reference reads it
with rustpython's.
"""
import ast
import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run
from conftest import venv_cpu_variant as cpu_variant

PYTHON = VENV_BIN / "python"
EXAMPLES = REPO_ROOT / "examples"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, pytest, cmake and ninja",
)


def build(kernel_builder, kernel_dir):
    result = run([kernel_builder, "build", kernel_dir, "--python", PYTHON, "--json"], check=True)
    return json.loads(result.stdout)


def kernel_test(kernel_builder, kernel_dir, *args):
    return run([kernel_builder, "test", kernel_dir, "--python", PYTHON, "--json", *args])


@pytest.fixture(scope="module")
def init_kernel(kernel_builder, tmp_path_factory):
    root = tmp_path_factory.mktemp("init")
    run([kernel_builder, "init", "--name", "me/act-cpu", "--backends", "cpu"], cwd=root,
        check=True)
    kernel_dir = root / "act-cpu"
    # Committed (init staged every file), so every build of it has the same id, HEAD's tree:
    # test_unchanged_rebuild_recompiles_nothing builds it again and finds nothing to do.
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"],
        cwd=kernel_dir, check=True)
    build(kernel_builder, kernel_dir)
    return kernel_dir


def test_init_kernel_passes_its_generated_tests(kernel_builder, init_kernel):
    result = kernel_test(kernel_builder, init_kernel)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    # No GPU here: the cpu variant, though torch was built with CUDA.
    reason = summary.pop("reason")  # why this variant (test_it_says_which_variant_...)
    assert summary == {"variant": cpu_variant(), "pytest_status": 0, "passed": True}
    assert reason
    assert " passed" in result.stderr
    # Nothing written into the variant or the kernel by the test run.
    assert not list((init_kernel / "build" / cpu_variant()).rglob("__pycache__"))
    assert not (init_kernel / ".pytest_cache").exists()


def test_a_failing_test_fails_the_command(kernel_builder, init_kernel, tmp_path):
    failing = init_kernel / "tests" / "test_zz_failing.py"
    failing.write_text(
        "import pytest\nfrom act_cpu import act_cpu\n\n\n"
        "@pytest.mark.kernels_ci\ndef test_fails():\n    assert False, 'meant to fail'\n\n\n"
        "def test_not_ci():\n    assert False, 'not a kernels_ci test: never run'\n")
    try:
        result = kernel_test(kernel_builder, init_kernel)
    finally:
        failing.unlink()
    assert result.returncode == 1
    assert json.loads(result.stdout)["pytest_status"] == 1
    assert "meant to fail" in result.stderr
    assert "never run" not in result.stderr


def test_what_a_test_leaves_in_a_cycle_is_still_finalized_at_exit(kernel_builder, init_kernel,
                                                                  tmp_path):
    # The driver freezes what collection made (torch's objects: the exit skips walking them),
    # not what the tests make: an object of a test's, kept alive only by a reference cycle,
    # still gets its finalizer run when the interpreter exits, as under plain pytest.
    marker = tmp_path / "finalized"
    leaving = init_kernel / "tests" / "test_zz_cycle.py"
    leaving.write_text(
        "import pytest\n\n\nclass Node:\n    def __del__(self):\n"
        f"        open({str(marker)!r}, 'w').close()\n\n\n"
        "@pytest.mark.kernels_ci\ndef test_leaves_a_cycle():\n    node = Node()\n"
        "    node.itself = node\n")
    try:
        result = kernel_test(kernel_builder, init_kernel)
    finally:
        leaving.unlink()
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["pytest_status"] == 0
    assert marker.exists(), result.stderr


def test_no_kernels_ci_tests_is_a_pass(kernel_builder, init_kernel, tmp_path):
    kernel = tmp_path / "plain"
    shutil.copytree(init_kernel, kernel, symlinks=True)
    for test in (kernel / "tests").glob("test_*.py"):
        test.write_text("def test_unmarked():\n    assert False\n")
    result = kernel_test(kernel_builder, kernel)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["pytest_status"] == 5


def test_variant_option_and_its_errors(kernel_builder, init_kernel):
    chosen = kernel_test(kernel_builder, init_kernel, "--variant", cpu_variant())
    assert chosen.returncode == 0, chosen.stderr
    missing = kernel_test(kernel_builder, init_kernel, "--variant", "torch-cuda")
    assert missing.returncode == 1
    assert (f'variant "torch-cuda" is not built; did you mean "{cpu_variant()}"? (built variants: '
            f'{cpu_variant()})') in missing.stderr


def test_pytest_arguments_pass_through(kernel_builder, init_kernel):
    result = run([kernel_builder, "test", init_kernel, "--python", PYTHON, "--", "-k",
                  "empty_input", "-v"])
    assert result.returncode == 0, result.stderr
    assert "test_empty_input" in result.stderr
    assert "test_matches_torch" not in result.stderr


def test_unchanged_rebuild_recompiles_nothing(kernel_builder, init_kernel):
    # An uncommitted kernel gets a random id per build (so a new project); a committed one
    # (init_kernel is) keeps its id, and a second build of it must find nothing to do.
    tree = run(["git", "rev-parse", "HEAD^{tree}"], cwd=init_kernel, check=True).stdout.strip()
    unchanged = build(kernel_builder, init_kernel)
    assert unchanged["unique_id"] == tree[:7]  # clean: the tests before left nothing behind
    work = init_kernel / "build" / ".kernelhub" / cpu_variant()
    module = next((work / "cmake").glob("*.abi3.so"))
    before = {p: p.stat().st_mtime_ns for p in
              [module, work / "project" / "CMakeLists.txt", work / "cmake" / "build.ninja"]}
    # -v: the tools' own output, which a build shows only when a step fails.
    result = run([kernel_builder, "build", init_kernel, "--python", PYTHON, "-v"], check=True)
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert "-- Configuring done" not in result.stderr  # cmake did not run
    assert "no work to do" in result.stderr  # ninja found everything current


def reference_all(source: str):
    """The reference's extract_all (kernel-builder/src/card.rs) over Python's own AST."""
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets):
            if isinstance(statement.value, ast.List):
                names = [e.value for e in statement.value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if names:
                    return names
    return None


ALL_CASES = [
    '__all__ = ["a", "b"]\n',
    '__all__ = [\n    "a",  # comment\n    \'b\',\n]\n',
    '"""doc __all__ = ["x"]"""\n__all__ = ["a"]\n',
    'if True:\n    __all__ = ["inner"]\n__all__ = ["outer"]\n',
    '__all__ = []\n__all__ = ["second"]\n',
    '__all__ = [name, "a", f"b", "c" "d", b"e"]\n',
    'x = __all__ = ["chained"]\n',
    'import os; __all__ = ["after_semicolon"]\n',
    '__all__ = ["layers", "f"]\n',
    '__all__ = ["esc\\x61ped", r"\\raw"]\n',
    'def f():\n    __all__ = ["no"]\n',
    '',
]


@pytest.mark.parametrize("source", ALL_CASES)
def test_fill_card_reads_all_like_the_reference(kernel_builder, tmp_path, source):
    kernel = tmp_path / "kk"
    (kernel / "torch-ext" / "kk").mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "kk"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = ["cpu"]\n'
        '[general.hub]\nrepo-id = "me/kk"\n[torch-noarch]\n')
    (kernel / "torch-ext" / "kk" / "__init__.py").write_text(source)
    result = run([kernel_builder, "fill-card", kernel, "--json"], check=True)
    context = json.loads(result.stdout)["context"]
    expected = reference_all(source)
    functions = [n for n in expected if n != "layers"] if expected else None
    assert context["functions"] == (functions or None)


def test_fill_card_renders_the_init_card_like_jinja(kernel_builder, init_kernel, tmp_path):
    jinja2 = pytest.importorskip("jinja2")
    output = tmp_path / "README.md"
    result = run([kernel_builder, "fill-card", init_kernel, "--output", output, "--json"],
                 check=True)
    report = json.loads(result.stdout)
    assert report["template"] == str(init_kernel / "CARD.md")
    context = report["context"]
    assert context["repo_id"] == "me/act-cpu"
    assert context["functions"] == ["act_cpu"]
    assert context["has_benchmark"] is True
    assert context["license"] == "apache-2.0"
    environment = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string((init_kernel / "CARD.md").read_text())
    assert output.read_text() == template.render(**context)
    assert report["card"] == output.read_text()
    assert "{{" not in output.read_text()
    assert 'get_kernel("me/act-cpu", version=1, backend="cpu", trust_remote_code=True)' in \
        output.read_text()


def test_fill_card_default_template_and_missing_repo_id(kernel_builder, init_kernel, tmp_path):
    card = run([kernel_builder, "fill-card", init_kernel, "--default-template"], check=True)
    assert "Backends: cpu." in card.stdout
    assert f"- `{cpu_variant()}`" in card.stdout
    kernel = tmp_path / "no-hub"
    (kernel / "torch-ext" / "no_hub").mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "no-hub"\nversion = 1\nedition = 5\nlicense = "MIT"\n'
        'backends = ["cpu"]\n[torch-noarch]\n')
    refused = run([kernel_builder, "fill-card", kernel])
    assert refused.returncode == 1
    assert "`repo-id` is not set in [general.hub]" in refused.stderr
    given = run([kernel_builder, "fill-card", kernel, "--repo-id", "me/no-hub"], check=True)
    assert 'get_kernel("me/no-hub", version=1, backend="cpu", trust_remote_code=True)' in \
        given.stdout


def examples_with_tests():
    return sorted(p.name for p in EXAMPLES.iterdir() if (p / "tests").is_dir()
                  and (p / "build.toml").is_file())


@pytest.mark.slow
@pytest.mark.parametrize("example", examples_with_tests())
def test_example_builds_and_its_tests_pass(kernel_builder, built_example, example):
    built = built_example(example)
    assert built.result.returncode == 0, built.result.stderr
    result = kernel_test(kernel_builder, built.kernel)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["pytest_status"] == 0, "the example's tests must collect and pass"


def test_it_says_which_variant_it_tests_and_why(kernel_builder, tmp_path):
    """issue 13 item 9: a noarch kernel for cpu and cuda; where torch is a CUDA build without
    a GPU the loader would pick the cuda variant, whose tests cannot run, and the command says
    so."""
    kernel = tmp_path / "probe"
    (kernel / "torch-ext" / "probe").mkdir(parents=True)
    (kernel / "tests").mkdir()
    (kernel / "build.toml").write_text(
        '[general]\nname = "probe"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\n'
        'backends = ["cpu", "cuda"]\n\n[torch-noarch]\n')
    (kernel / "torch-ext" / "probe" / "__init__.py").write_text("VALUE = 1\n")
    (kernel / "tests" / "test_probe.py").write_text(
        "import pytest\nimport probe\n\n\n@pytest.mark.kernels_ci\ndef test_value():\n"
        "    assert probe.VALUE == 1\n")
    # The checks would import torch twice to load both variants: not what this test is about.
    run([kernel_builder, "build", kernel, "--python", PYTHON, "--skip-checks"], check=True)
    result = kernel_test(kernel_builder, kernel)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    import torch  # the venv's, as the command's
    if torch.version.cuda and not torch.cuda.is_available():
        assert summary["variant"] == "torch-cpu"
        assert summary["reason"] == ("torch here is a cuda build, but no cuda device is present, "
                                     "so the cuda variants' tests cannot run")
    else:
        expected = "torch-cuda" if torch.cuda.is_available() else "torch-cpu"
        assert summary["variant"] == expected
        assert summary["reason"].startswith("the variant the kernels loader picks on this machine")
    assert f"Testing {summary['variant']} ({summary['reason']})" in result.stderr
    chosen = kernel_test(kernel_builder, kernel, "--variant", "torch-cpu")
    assert json.loads(chosen.stdout)["reason"] == "as --variant asked"


def counting_python(folder):
    """An interpreter that is the .venv's, and appends one line per process it runs to
    `folder`/starts.log: "torch" when the process had imported torch by its end, else "-"."""
    site = folder / "site"
    site.mkdir(parents=True)
    (site / "sitecustomize.py").write_text(
        "import atexit, sys\n\n\ndef _note():\n"
        f"    with open({str(folder / 'starts.log')!r}, 'a') as log:\n"
        "        log.write('torch\\n' if 'torch' in sys.modules else '-\\n')\n\n\n"
        "atexit.register(_note)\n")
    wrapper = folder / "python"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={site}${{PYTHONPATH:+:$PYTHONPATH}} "
                       f"exec {PYTHON} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper, folder / "starts.log"


def test_one_torch_import_for_a_test_run(kernel_builder, init_kernel, tmp_path):
    """The tests import torch; the variant choice asks torch whether the GPU is there in that
    same interpreter, and the rest of what it needs comes from the probe cache. Before, a
    `test` started three interpreters: one for `import pytest`, one that imported torch to
    probe the machine, and pytest's."""
    python, log = counting_python(tmp_path / "counting")
    env = {"KERNELHUB_CACHE_DIR": str(tmp_path / "cache")}
    args = [kernel_builder, "test", init_kernel, "--python", python, "--json"]
    first = run(args, env=env)
    assert first.returncode == 0, first.stderr
    log.unlink()
    again = run(args, env=env)  # the probe now cached
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)
    assert log.read_text().splitlines().count("torch") == 1, log.read_text()
    assert f"Testing {cpu_variant()} (" in again.stderr


def test_a_python_without_pytest_is_named(kernel_builder, init_kernel, tmp_path):
    bare = shutil.which("python3", path="/usr/bin:/bin")
    if bare is None or run([bare, "-c", "import pytest"]).returncode == 0:
        pytest.skip("needs a system python3 without pytest")
    result = run([kernel_builder, "test", init_kernel, "--python", bare, "--variant",
                  cpu_variant()])
    assert result.returncode != 0
    assert f'"{bare}" cannot import pytest; install it with' in result.stderr
