# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder init`: the generated project against the reference packages.

The reference's build.toml reader is `Build.open`; kernels-data 0.16.2 in .venv does not
export it yet, but the `kernels` package bundles the same Rust reader as `kernels._rust`.
"""
import itertools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import jinja2
import pytest

from conftest import REPO_ROOT, VENV_BIN, run

INIT_BACKENDS = ["cpu", "cuda", "metal", "rocm", "xpu"]
SUBSETS = [
    list(combo) for size in range(1, 6) for combo in itertools.combinations(INIT_BACKENDS, size)
]
TEMPLATES = REPO_ROOT / "templates" / "init"
VENV_PYTHON = VENV_BIN / "python"


def reference_build_open(directory: Path):
    try:
        from kernels_data import Build  # newer kernels-data releases
    except ImportError:
        from kernels._rust import Build
    return Build.open(str(directory))


def init(kernel_builder, cwd, *args, check=True):
    return run([kernel_builder, "init", *args], cwd=cwd, check=check)


def project_files(directory: Path) -> dict:
    """Relative path -> (bytes, mtime_ns) of every file outside .git."""
    result = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(directory).parts:
            result[str(path.relative_to(directory))] = (path.read_bytes(), path.stat().st_mtime_ns)
    return result


def check_config(kernel_builder, directory: Path):
    result = run([kernel_builder, "check-config", directory])
    if "not implemented" in result.stderr:
        pytest.skip("check-config is still the placeholder")
    return result


@pytest.mark.parametrize("backends", SUBSETS + [["all"]], ids=lambda b: "-".join(b))
def test_every_backend_set_gives_a_valid_project(kernel_builder, tmp_path, backends):
    result = init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", *backends)
    directory = tmp_path / "my-kernel"
    assert result.stdout == f"Initialized me/my-kernel at {directory}\n"
    expected = INIT_BACKENDS if backends == ["all"] else backends

    build = reference_build_open(directory)
    assert sorted(str(b).lower() for b in build.general.backends) == sorted(expected)
    config = tomllib.loads((directory / "build.toml").read_text())
    assert config["general"]["backends"] == expected
    assert {k["backend"] for k in config["kernel"].values()} == set(expected)
    for kernel in config["kernel"].values():
        assert kernel["depends"] == ["torch"]
        for source in kernel["src"]:
            assert (directory / source).is_file(), source

    checked = check_config(kernel_builder, directory)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    assert (directory / "my_kernel_cpu").exists() == ("cpu" in expected)
    assert (directory / "my_kernel_cuda").exists() == bool({"cuda", "rocm"} & set(expected))
    assert (directory / "my_kernel_metal").exists() == ("metal" in expected)
    assert (directory / "my_kernel_xpu").exists() == ("xpu" in expected)
    assert not (directory / "flake.nix").exists()
    for path in directory.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")  # every generated Python file parses
    for path in project_files(directory):
        if path != "CARD.md":
            assert "{{" not in (directory / path).read_text(), path


def render_with_jinja2(context: dict) -> dict:
    """The project as Python's Jinja2 renders templates/init with the manifest's rules."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["tojson"] = json.dumps
    manifest = tomllib.loads((TEMPLATES / "manifest.toml").read_text())
    files = {}
    for entry in manifest["file"]:
        if "when" in entry:
            test = "{% if " + entry["when"] + " %}yes{% endif %}"
            if jinja2.Environment().from_string(test).render(**context) != "yes":
                continue
        path = env.from_string(entry["path"]).render(**context)
        files[path] = env.from_string((TEMPLATES / entry["template"]).read_text()).render(**context)
    return files


@pytest.mark.parametrize("backends", [["cuda"], ["cpu", "rocm", "metal"], INIT_BACKENDS])
def test_rendering_matches_jinja2(kernel_builder, tmp_path, backends):
    init(kernel_builder, tmp_path, "--name", "some-org/fused_thing", "--backends", *backends,
         "--license", 'My "odd" license')
    directory = tmp_path / "fused-thing"
    context = {
        "kernel_name": "fused-thing", "kernel_name_normalized": "fused_thing",
        "kernel_name_class": "FusedThing", "repo_id": "some-org/fused-thing",
        "owner": "some-org", "license": 'My "odd" license', "backends": backends,
        **{f"has_{b}": b in backends for b in INIT_BACKENDS},
    }
    expected = render_with_jinja2(context)
    actual = {path: content.decode() for path, (content, _) in project_files(directory).items()}
    assert actual.keys() == expected.keys()
    for path in expected:
        assert actual[path] == expected[path], path


def test_card_renders_as_fill_card_would(kernel_builder, tmp_path):
    init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu")
    card = (tmp_path / "my-kernel" / "CARD.md").read_text()
    env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
    filled = env.from_string(card).render(
        repo_id="me/my-kernel", version=1, functions=["my_kernel"], layers=["MyLayer"],
        has_benchmark=False, upstream="https://github.com/up/stream", source=None,
        license="apache-2.0",
        # Ours (issue 22 §8): the hub the card is for, its trust and the layers' forwards.
        hub_url="http://127.0.0.1:8000", hub_endpoint="http://127.0.0.1:8000",
        repo_url="http://127.0.0.1:8000/kernels/me/my-kernel", trusted_publisher=False,
        load_backend="cpu", layer_forwards={"MyLayer": "self, x"}, layer_devices=["cpu"],
    )
    assert filled.startswith("---\nlibrary_name: kernels\nlicense: apache-2.0\n---\n\n# my-kernel\n")
    assert ('kernel = get_kernel("me/my-kernel", version=1, backend="cpu", '
            'trust_remote_code=True)\n') in filled
    assert 'os.environ["HF_ENDPOINT"] = "http://127.0.0.1:8000"' in filled
    assert "[`me/my-kernel`](http://127.0.0.1:8000/kernels/me/my-kernel)" in filled
    assert "    def forward(self, x):\n" in filled
    assert "## Layers\n\n- `MyLayer`\n" in filled
    assert "This kernel has no benchmarks yet." in filled
    assert "The kernel's code comes from https://github.com/up/stream." in filled
    assert "## Source" not in filled and "{{" not in filled and "{%" not in filled


def test_existing_build_toml_changes_nothing(kernel_builder, tmp_path):
    directory = tmp_path / "my-kernel"
    directory.mkdir()
    (directory / "build.toml").write_text("# mine\n")
    (directory / "notes.txt").write_text("keep me\n")
    before = project_files(directory)
    result = init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu",
                  check=False)
    assert result.returncode != 0
    assert '"build.toml"' in result.stderr and "--overwrite" in result.stderr
    assert project_files(directory) == before
    assert not (directory / ".git").exists()


def test_overwrite_keeps_user_files(kernel_builder, tmp_path):
    directory = tmp_path / "my-kernel"
    init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu")
    (directory / "build.toml").write_text("# edited\n")
    (directory / "my_kernel_cpu" / "extra.cpp").write_text("// user code\n")
    (directory / "NOTES.md").write_text("mine\n")
    result = init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu",
                  "--overwrite")
    assert result.returncode == 0
    assert (directory / "build.toml").read_text().startswith("[general]\n")
    assert (directory / "my_kernel_cpu" / "extra.cpp").read_text() == "// user code\n"
    assert (directory / "NOTES.md").read_text() == "mine\n"


def test_git_repository_with_staged_files(kernel_builder, tmp_path):
    init(kernel_builder, tmp_path, "me/relu2d", "--backends", "cuda", "metal")
    directory = tmp_path / "relu2d"
    assert (directory / ".git").is_dir()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    status = run(["git", "status", "--porcelain"], cwd=directory, check=True).stdout
    staged = sorted(line[3:] for line in status.splitlines())
    assert all(line.startswith("A  ") for line in status.splitlines()), status
    assert staged == sorted(project_files(directory))
    assert "relu2d_metal/relu2d.mm" in staged and "relu2d_cuda/relu2d.cu" in staged
    log = run(["git", "log"], cwd=directory)
    assert log.returncode != 0  # no commit was made


def test_json_output_and_explicit_path(kernel_builder, tmp_path):
    result = init(kernel_builder, tmp_path, "elsewhere/dir", "--name", "me/k2", "--json",
                  "--backends", "CPU", "cpu", "XPU")
    out = json.loads(result.stdout)
    assert out["repo_id"] == "me/k2"
    assert out["directory"] == str(tmp_path / "elsewhere" / "dir")
    assert out["backends"] == ["cpu", "xpu"]
    assert "k2_xpu/k2.cpp" in out["files"] and "build.toml" in out["files"]


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "pass --name OWNER/REPO"),
        (["plain-folder"], "pass --name OWNER/REPO"),
        (["--name", "me/Bad_Name"], 'invalid kernel name "Bad-Name"'),
        (["--name", "no-owner"], "expected OWNER/REPO"),
        (["--name", "me/ok", "--backends", "tpu"], 'backend "tpu" has no init template'),
        (["--name", "me/ok", "--backends", "cdua"], 'did you mean "cuda"?'),
        (["--name", "me/ok", "--license", ""], "--license must not be empty"),
    ],
)
def test_rejected_requests_write_nothing(kernel_builder, tmp_path, args, message):
    result = init(kernel_builder, tmp_path, *args, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_repo_name_with_underscores_says_what_it_became(kernel_builder, tmp_path):
    """Issue 22 §9: `init acme/gelu_and_mul` made gelu-and-mul without a word."""
    result = init(kernel_builder, tmp_path, "acme/gelu_and_mul", "--backends", "cpu")
    assert ('note: the kernel is named "gelu-and-mul", not "gelu_and_mul"' in result.stderr)
    assert 'its Python package is "gelu_and_mul"' in result.stderr
    assert "Initialized acme/gelu-and-mul at" in result.stdout
    assert (tmp_path / "gelu-and-mul" / "build.toml").is_file()
    plain = init(kernel_builder, tmp_path, "acme/plain", "--backends", "cpu")
    assert "note:" not in plain.stderr


def test_a_path_typed_after_backends_is_the_path(kernel_builder, tmp_path):
    """Issue 22 §9: `init --backends cpu acme/x` failed with "no kernel name given"."""
    result = init(kernel_builder, tmp_path, "--backends", "cpu", "cuda", "acme/my-op", "--json")
    out = json.loads(result.stdout)
    assert out["repo_id"] == "acme/my-op"
    assert out["backends"] == ["cpu", "cuda"]
    assert out["directory"] == str(tmp_path / "my-op")


def test_a_missing_path_says_what_backends_took(kernel_builder, tmp_path):
    result = init(kernel_builder, tmp_path, "--backends", "cpu", "cuda", check=False)
    assert result.returncode == 1
    assert "no kernel name given" in result.stderr
    assert "(--backends took cpu, cuda: put PATH before --backends" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_benchmark_workloads_are_sized_for_the_cpu(kernel_builder, tmp_path):
    """Issue 22 §6: the template's large workload held 128 Mi half floats on every device, about
    1.8 s a call on a cpu, so `kernelhub benchmark` with its default 100 calls (and as many of
    verify_large) did not finish in 400 s. On the cpu it is now 1 Mi elements at most."""
    init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu")
    script = tmp_path / "my-kernel" / "benchmarks" / "benchmark.py"
    probe = (
        "import importlib.util, json, sys\n"
        "spec = importlib.util.spec_from_file_location('bench', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "bench = module.MyKernelBenchmark()\n"
        "bench.device = 'cpu'\n"
        "sizes = {}\n"
        "for workload in ('small', 'large'):\n"
        "    getattr(bench, f'setup_{workload}')()\n"
        "    sizes[workload] = bench.x.numel()\n"
        "print(json.dumps(sizes))\n")
    out = subprocess.run([str(VENV_PYTHON), "-c", probe, str(script)], capture_output=True,
                         text=True, check=True, timeout=300).stdout
    sizes = json.loads(out)
    assert sizes["small"] <= 1 << 20 and sizes["large"] <= 1 << 20, sizes


# A stand-in for the registration.h that kernel-builder generates (builder.md §5).
REGISTRATION_H = """#pragma once
#include <Python.h>
#define KH_CONCAT_INNER(a, b) a##b
#define KH_CONCAT(a, b) KH_CONCAT_INNER(a, b)
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define REGISTER_EXTENSION(NAME)                                                 \\
  PyMODINIT_FUNC KH_CONCAT(PyInit_, NAME)() {                                    \\
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, #NAME, nullptr, 0, \\
                                        nullptr};                                \\
    return PyModule_Create(&module);                                             \\
  }
"""


def torch_build_flags():
    torch = pytest.importorskip("torch")
    from torch.utils import cpp_extension

    python_include = sysconfig.get_paths()["include"]
    if not (Path(python_include) / "Python.h").exists():
        pytest.skip("Python.h is not installed")
    includes = [f"-I{p}" for p in cpp_extension.include_paths()] + [f"-I{python_include}"]
    libraries = Path(torch.__file__).parent / "lib"
    return includes, libraries


@pytest.mark.slow
def test_cpu_kernel_builds_and_its_tests_pass(kernel_builder, tmp_path):
    """Compiles the cpu variant against the venv's torch and runs the generated tests."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    includes, libraries = torch_build_flags()
    init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu", "cuda")
    project = tmp_path / "my-kernel"
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "registration.h").write_text(REGISTRATION_H)
    package = tmp_path / "site" / "my_kernel"
    shutil.copytree(project / "torch-ext" / "my_kernel", package)
    ops_name = "_my_kernel_cpu_e2e"
    flags = ["-std=c++20", "-O1", "-fPIC", "-DCPU_KERNEL", f"-I{stub}", *includes]
    objects = []
    for source in ["torch-ext/torch_binding.cpp", "my_kernel_cpu/my_kernel_cpu.cpp"]:
        objects.append(tmp_path / (Path(source).stem + ".o"))
        run(["g++", *flags, f"-DTORCH_EXTENSION_NAME={ops_name}", "-c", project / source,
             "-o", objects[-1]], check=True)
    run(["g++", "-shared", "-o", package / f"{ops_name}.abi3.so", *objects, f"-L{libraries}",
         "-lc10", "-ltorch_cpu", "-ltorch", f"-Wl,-rpath,{libraries}"], check=True)
    # What the generated _ops.py does (builder.md §5).
    (package / "_ops.py").write_text(
        f"import torch\nfrom . import {ops_name}\nops = torch.ops.{ops_name}\n")
    result = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  "-W", "ignore::pytest.PytestUnknownMarkWarning", "tests/test_my_kernel.py"],
                 cwd=project, env={"PYTHONPATH": str(package.parent), "CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "15 passed" in result.stdout, result.stdout


@pytest.mark.slow
def test_cuda_kernel_compiles(kernel_builder, tmp_path):
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                     if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    includes, _ = torch_build_flags()
    init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cuda")
    source = tmp_path / "my-kernel" / "my_kernel_cuda" / "my_kernel.cu"
    result = subprocess.run([nvcc, "-std=c++20", "-DCUDA_KERNEL", "-arch=sm_80", *includes,
                             "-c", str(source), "-o", str(tmp_path / "kernel.o")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


def test_example_loads_the_variant_of_the_device_it_computes_on(kernel_builder, tmp_path):
    """issue 13 item 9: example.py computed on CPU tensors but let the loader choose, which on
    a CUDA torch picks the cuda variant even without a GPU. Here the generated example.py runs
    next to a noarch build of the same kernel whose cuda copy refuses to load without a CUDA
    device, so only a load of the variant for the device in use passes."""
    init(kernel_builder, tmp_path, "--name", "me/my-kernel", "--backends", "cpu", "cuda")
    kernel = tmp_path / "noarch" / "my-kernel"
    package = kernel / "torch-ext" / "my_kernel"
    package.mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "my-kernel"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\n'
        'backends = ["cpu", "cuda"]\n\n[torch-noarch]\n')
    (package / "__init__.py").write_text(
        "import torch\nimport torch.nn.functional as F\n\n"
        'if "torch-cuda" in __file__ and not torch.cuda.is_available():\n'
        '    raise RuntimeError("the cuda variant was loaded where no CUDA device is present")\n\n'
        "\ndef my_kernel(x):\n    return F.silu(x)\n")
    # Without the checks: the load check would rightly set the cuda copy aside here.
    run([kernel_builder, "build", kernel, "--python", VENV_PYTHON, "--skip-checks"], check=True)
    shutil.copy(tmp_path / "my-kernel" / "example.py", kernel / "example.py")
    result = run([VENV_PYTHON, kernel / "example.py"])
    assert result.returncode == 0, result.stdout + result.stderr
    import torch  # the venv's, as example.py's
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert f"my_kernel matches torch.nn.functional.silu on {device} (the {device} variant)" \
        in result.stdout
