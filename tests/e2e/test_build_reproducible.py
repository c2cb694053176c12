# SPDX-License-Identifier: Apache-2.0
"""Same inputs, same bytes (issue 24 §1): one commit of a kernel, built in two folders of
different depth, by two "users" (HOME, umask 0022 and 0077, LANG/LC_ALL, TZ), from checkouts
whose files have different times, with ccache off, gives the same variant: the same files,
byte for byte and mode for mode, so the same digests in metadata.json, and the same
metadata.json. One build per kind and folder: cpu and cuda (examples/relu), noarch
(examples/silu-and-mul), Torch stable ABI (examples/relu-stable-abi) and tvm-ffi
(examples/relu-tvm-ffi, cpu). The cpu test also checks what `provenance.build` records, and
that the reference's readers (kernels 0.17.2, kernels-data) load that metadata.json.

Before the fix the cpu module held the two folders' absolute source paths (and so a different
GNU build id), the cuda module also nvcc's temporary file names (tmpxft_<pid>_...) and a
module id hashed from the source's absolute path, and the variants' modes followed the umask.
"""
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, VENV_BIN, run, venv_torch
from layers_support import venv_has_tvm_ffi
from test_build_cuda import NVCC, TORCH_CUDA

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja")

# One commit, whoever makes it where: the same tree, author, committer and dates give the same
# commit id, so both builds get the same kernel id and provenance.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Kernel Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Kernel Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-03-01T12:00:00Z", "GIT_COMMITTER_DATE": "2026-03-01T12:00:00Z",
}
COMMIT_TIME = 1772366400  # 2026-03-01T12:00:00Z
ORIGIN = "https://builder:s3cret@hub.example.invalid/kernels-community/{name}.git"

# The two builders: everything that differs between two people's machines but is not an input.
USERS = [
    {"umask": 0o022, "env": {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
                             "USER": "alice"}, "mtime": 1_700_000_000},
    {"umask": 0o077, "env": {"LANG": "en_US.UTF-8", "LC_ALL": "en_US.UTF-8",
                             "TZ": "Pacific/Auckland", "USER": "bob"}, "mtime": 1_000_000_000},
]


def git(kernel: Path, *args):
    result = subprocess.run(["git", *args], cwd=kernel, capture_output=True, text=True,
                            env={**os.environ, **GIT_IDENTITY})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def checkout(example: str, folder: Path, mtime: int, backends=None) -> Path:
    """examples/<example> committed in `folder`/<example> with the fixed identity, an origin
    remote, and every file's time set to `mtime` (a checkout made at another moment)."""
    kernel = folder / example
    shutil.copytree(EXAMPLES / example, kernel,
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    if backends is not None:
        toml = kernel / "build.toml"
        text = toml.read_text()
        replaced = text.replace('backends = ["cpu", "cuda"]', f"backends = {json.dumps(backends)}")
        assert replaced != text, toml
        toml.write_text(replaced)
    git(kernel, "init", "-q", "-b", "main")
    git(kernel, "add", "-A")
    git(kernel, "commit", "-q", "-m", "kernel")
    git(kernel, "remote", "add", "origin", ORIGIN.format(name=example))
    for path in kernel.rglob("*"):
        if ".git" not in path.relative_to(kernel).parts:
            os.utime(path, (mtime, mtime), follow_symlinks=False)
    return kernel


def build(kernel_builder, kernel: Path, user: dict, home: Path, variants=(), ccache=None,
          python=PYTHON, options=()):
    """`ccache`: the environment of a compiler cache to build through ({}: the user's); None:
    ccache off. `options`: more arguments of `kernel-builder build`."""
    home.mkdir(parents=True)
    env = {key: value for key, value in os.environ.items()
           if key not in ("SOURCE_DATE_EPOCH", "XDG_CACHE_HOME", "CCACHE_BASEDIR",
                          "CCACHE_DISABLE")}
    env.update(user["env"], HOME=str(home))
    env.update(ccache if ccache is not None else {"CCACHE_DISABLE": "1"})
    args = [kernel_builder, "build", kernel, "--python", python, "--json", "--skip-checks",
            *options]
    for variant in variants:
        args += ["--variant", variant]
    result = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=900,
                            preexec_fn=lambda: os.umask(user["umask"]))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def variant_files(variant: Path) -> dict:
    """Every file and folder of a variant: its mode, and a file's bytes."""
    files = {}
    for path in sorted(variant.rglob("*")):
        info = path.lstat()
        key = path.relative_to(variant).as_posix()
        files[key] = (stat.S_IMODE(info.st_mode),
                      path.read_bytes() if stat.S_ISREG(info.st_mode) else None)
    files["."] = (stat.S_IMODE(variant.lstat().st_mode), None)
    return files


def assert_same_variants(first: dict, second: dict):
    assert [v["name"] for v in first["variants"]] == [v["name"] for v in second["variants"]]
    assert first["variants"], first
    for a, b in zip(first["variants"], second["variants"]):
        assert a["id"] == b["id"]
        meta_a = json.loads((Path(a["path"]) / "metadata.json").read_text())
        meta_b = json.loads((Path(b["path"]) / "metadata.json").read_text())
        assert meta_a["digest"] == meta_b["digest"], a["name"]
        files_a, files_b = variant_files(Path(a["path"])), variant_files(Path(b["path"]))
        assert sorted(files_a) == sorted(files_b), a["name"]
        for name in files_a:
            assert files_a[name][0] == files_b[name][0], f"{a['name']}/{name}: modes differ"
            assert files_a[name][1] == files_b[name][1], f"{a['name']}/{name}: bytes differ"


def build_in_two_folders(kernel_builder, tmp_path, example, variants=(), backends=None):
    """The example built by the two USERS, in folders of different depth; their results."""
    results = []
    for index, (user, folder) in enumerate(zip(USERS, ["a", "b/deeper/than/a"])):
        kernel = checkout(example, tmp_path / folder, user["mtime"], backends)
        results.append(build(kernel_builder, kernel, user, tmp_path / f"home-{index}" / "user",
                             variants))
    assert git(tmp_path / "a" / example, "rev-parse", "HEAD") == git(
        tmp_path / "b/deeper/than/a" / example, "rev-parse", "HEAD")
    return results


@pytest.fixture(scope="module")
def built_in_two_folders(kernel_builder, tmp_path_factory):
    """build_in_two_folders, once per example and variant in this file: the clone test below
    compares with the same uncached build as the reproducibility tests (a CUDA build is a
    minute or two of the suite)."""
    done = {}

    def get(example, variant):
        if (example, variant) not in done:
            folder = tmp_path_factory.mktemp(f"{example}-uncached")
            done[example, variant] = build_in_two_folders(kernel_builder, folder, example,
                                                          [variant])
        return done[example, variant]
    return get


def variant_names(kernel_builder, example: str, marker: str):
    listed = run([kernel_builder, "list-variants", EXAMPLES / example], check=True)
    return [name for name in listed.stdout.split() if marker in name]


def load_with_reference(metadata_json: bytes):
    """metadata.json read by kernels 0.17.2 and kernels-data, the reference's readers."""
    script = ("import sys, kernels._rust as k, kernels_data as d\n"
              "data = sys.stdin.buffer.read()\n"
              "meta = k.Metadata.from_bytes(data)\n"
              "d.Metadata.from_bytes(data)\n"
              "print(meta.provenance.kernel.commit, meta.provenance.dirty)\n")
    result = subprocess.run([str(PYTHON), "-c", script], input=metadata_json,
                            capture_output=True)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode().split()


def relu_variant(kernel_builder, kind: str) -> str:
    if kind == "cpu":
        return [n for n in variant_names(kernel_builder, "relu", "-cpu-") if "stable" not in n][0]
    return variant_names(kernel_builder, "relu", "-cu")[0]


def test_cpu_variant_is_reproducible(kernel_builder, built_in_two_folders):
    first, second = built_in_two_folders("relu", relu_variant(kernel_builder, "cpu"))
    assert_same_variants(first, second)

    variant = Path(first["variants"][0]["path"])
    metadata_json = (variant / "metadata.json").read_bytes()
    provenance = json.loads(metadata_json)["provenance"]
    commit = git(variant.parent.parent, "rev-parse", "HEAD")
    assert provenance["kernel"] == {"commit": commit, "dirty": False}
    record = provenance["build"]
    # The origin without its credentials, the commit's time as the compilers' clock.
    assert record["origin"] == "https://hub.example.invalid/kernels-community/relu.git"
    assert record["source-date-epoch"] == COMMIT_TIME
    assert record["toolchain"]["torch"] == venv_torch()["version"]
    assert record["toolchain"]["cxx"].split()[0] in ("GNU", "Clang")
    assert record["toolchain"]["cmake"]
    assert record["flags"]["build-type"] == "Release"
    # Nothing of the machine: no folder, no user, no HOME.
    for text in (str(variant.parents[3]), "alice", "bob", "s3cret"):
        assert text not in metadata_json.decode()
    assert load_with_reference(metadata_json) == [commit, "False"]


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc not found: install the CUDA toolkit")
@pytest.mark.skipif(not TORCH_CUDA, reason="the .venv's torch is not a CUDA build")
def test_cuda_variant_is_reproducible(kernel_builder, built_in_two_folders):
    first, second = built_in_two_folders("relu", relu_variant(kernel_builder, "cuda"))
    assert_same_variants(first, second)
    record = json.loads((Path(first["variants"][0]["path"]) / "metadata.json").read_text())
    assert record["provenance"]["build"]["toolchain"]["cuda"].startswith("NVIDIA ")


def test_noarch_variants_are_reproducible(kernel_builder, tmp_path):
    first, second = build_in_two_folders(kernel_builder, tmp_path, "silu-and-mul")
    assert_same_variants(first, second)


def test_stable_abi_variant_is_reproducible(kernel_builder, tmp_path):
    first, second = build_in_two_folders(kernel_builder, tmp_path, "relu-stable-abi")
    assert_same_variants(first, second)


@pytest.mark.skipif(not PYTHON.exists() or not venv_has_tvm_ffi(),
                    reason="needs apache-tvm-ffi in the .venv")
def test_tvm_ffi_variant_is_reproducible(kernel_builder, tmp_path):
    first, second = build_in_two_folders(kernel_builder, tmp_path, "relu-tvm-ffi",
                                         backends=["cpu"])
    assert_same_variants(first, second)


def ccache_counters(cache_env: dict) -> dict:
    printed = subprocess.run(["ccache", "--print-stats"], env={**os.environ, **cache_env},
                             capture_output=True, text=True, check=True).stdout
    return {name: int(value) for name, value in
            (line.split("\t") for line in printed.splitlines() if "\t" in line)
            if value.isdigit()}


@pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache not installed")
@pytest.mark.parametrize("kind", [
    "cpu",
    pytest.param("cuda", marks=[
        pytest.mark.slow,
        pytest.mark.skipif(NVCC is None, reason="nvcc not found: install the CUDA toolkit"),
        pytest.mark.skipif(not TORCH_CUDA, reason="the .venv's torch is not a CUDA build")]),
])
def test_a_clone_in_another_folder_compiles_nothing_and_gives_the_same_bytes(
        kernel_builder, built_in_two_folders, tmp_path, kind):
    """Issue 25: a compiler cache shared between copies of one kernel. kernel-builder makes the
    kernel's folder ccache's base_dir, and the project maps the relative paths ccache then
    hands the compiler to the names it gives the absolute ones. So a second clone, in a folder
    of another depth, takes every object from the first one's cache, and the variant has the
    same bytes as one compiled without ccache. Before, every object of the clone missed (the
    folder was in each command; for nvcc inside -Xcompiler, whose values ccache hashes)."""
    variant = relu_variant(kernel_builder, kind)
    # A cache of this test's own, without the machine's ccache.conf (its base_dir, say).
    (tmp_path / "ccache.conf").write_text("")
    cache = {"CCACHE_DIR": str(tmp_path / "ccache"),
             "CCACHE_CONFIGPATH": str(tmp_path / "ccache.conf")}
    kernels = [checkout("relu", tmp_path / folder, USERS[0]["mtime"])
               for folder in ["a", "b/deeper/than/a"]]

    first = build(kernel_builder, kernels[0], USERS[0], tmp_path / "home-0" / "user",
                  [variant], ccache=cache)
    filled = ccache_counters(cache)
    assert filled["cache_miss"] >= 2, filled  # the kernel's source and the binding, at least
    subprocess.run(["ccache", "-z"], env={**os.environ, **cache}, check=True,
                   capture_output=True)
    second = build(kernel_builder, kernels[1], USERS[0], tmp_path / "home-1" / "user",
                   [variant], ccache=cache)
    counters = ccache_counters(cache)
    hits = counters["direct_cache_hit"] + counters["preprocessed_cache_hit"]
    assert counters["cache_miss"] == 0 and hits == filled["cache_miss"], counters
    # The same commit built by the same user, in another folder, with ccache off.
    uncached = built_in_two_folders("relu", variant)[0]
    assert_same_variants(first, second)
    assert_same_variants(first, uncached)


def python_with_torch_elsewhere(folder: Path, changed_header: str = "") -> Path:
    """The venv's python, finding its torch package in `folder` instead: a copy made of hard
    links, so what a build against another torch install differs in is its folder. With
    `changed_header` (a path under torch/include), that header gains a declaration: another
    torch version, to a compiler cache (a comment would not do: the preprocessor drops it, and
    ccache rightly finds the same preprocessed source)."""
    try:
        shutil.copytree(venv_torch()["package_dir"], folder / "torch", copy_function=os.link)
    except OSError as error:  # another file system: no hard links
        pytest.skip(f"cannot link torch's files into {folder}: {error}")
    if changed_header:
        header = folder / "torch" / "include" / changed_header
        text = header.read_text()
        header.unlink()  # a file of its own, not the venv's through the hard link
        header.write_text(text + "\nstruct KernelhubAnotherTorch;\n")
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{folder}" exec "{PYTHON}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def ccache_results(log: Path) -> dict:
    """ccache's log: each source's last result ("cache_miss", "direct_cache_hit", ...)."""
    results, sources = {}, {}
    for line in log.read_text().splitlines():
        pid = line.split("]")[0].split()[-1] if "]" in line else ""
        if "Source file: " in line:
            sources[pid] = line.split("Source file: ", 1)[1]
        elif "Result: " in line and pid in sources:
            result = line.split("Result: ", 1)[1].strip()
            if result in ("cache_miss", "direct_cache_hit", "preprocessed_cache_hit"):
                results[Path(sources[pid]).name] = result
    return results


def test_a_build_tree_configured_again_for_a_torch_elsewhere_links_that_torch(
        kernel_builder, tmp_path):
    """The same kernel folder built again with a Python whose torch (the same version) is in
    another folder, say a venv made anew: the module links that torch's libraries. Found with
    the test below: the project kept find_library's cached answers from its first configure,
    so the module went on linking (and naming in its run path) the first torch's libraries."""
    kernel = checkout("relu", tmp_path / "kernel", USERS[0]["mtime"], ["cpu"])
    other_torch = python_with_torch_elsewhere(tmp_path / "other-torch")
    cpu = [n for n in variant_names(kernel_builder, "relu", "-cpu-") if "stable" not in n][:1]
    for index, python in enumerate((PYTHON, other_torch)):
        built = build(kernel_builder, kernel, USERS[0], tmp_path / f"home-{index}" / "user", cpu,
                      ccache={}, python=python)
    module = next(Path(built["variants"][0]["path"]).glob("*.so"))
    dynamic = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True,
                             check=True).stdout
    assert str(tmp_path / "other-torch" / "torch" / "lib") in dynamic, dynamic


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache not installed")
@pytest.mark.skipif(NVCC is None, reason="nvcc not found: install the CUDA toolkit")
@pytest.mark.skipif(not TORCH_CUDA, reason="the .venv's torch is not a CUDA build")
def test_the_same_torch_elsewhere_compiles_nothing_and_another_only_what_includes_it(
        kernel_builder, tmp_path):
    """Issue 25: what does not change is not compiled again. examples/rmsnorm (a .cu that
    includes no torch header, two C++ sources that do) built against the same torch installed
    in another folder (a new venv, CI's clone) takes every object from ccache: the compile lines
    name torch's headers through the build tree's link to them. Before, they named the venv's
    folder, and everything that includes torch compiled again. Against another torch (one
    header changed), the .cu still comes from ccache while the C++ sources compile again; the
    module has the same bytes as one built without ccache. Before that, nvcc was given torch's
    include folders as "-isystem=<dir>", which ccache hashed whole even in its preprocessor
    mode, so the .cu compiled again too."""
    kernel = checkout("rmsnorm", tmp_path / "kernel", USERS[0]["mtime"], ["cuda"])
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('cuda-capabilities = ["8.0", "9.0+PTX"]',
                                             'cuda-capabilities = ["8.0"]'))
    git(kernel, "commit", "-q", "-a", "-m", "one arch")
    uncached = tmp_path / "uncached"
    shutil.copytree(kernel, uncached)
    log = tmp_path / "ccache.log"
    (tmp_path / "ccache.conf").write_text(f"log_file = {log}\n")
    cache = {"CCACHE_DIR": str(tmp_path / "ccache"),
             "CCACHE_CONFIGPATH": str(tmp_path / "ccache.conf")}
    # Outside the sandbox, where ccache can write its log.
    build(kernel_builder, kernel, USERS[0], tmp_path / "home-0" / "user", ccache=cache,
          options=["--no-sandbox"])
    sources = ("rmsnorm_kernels.cu", "torch_binding.cpp", "rmsnorm_cuda.cpp")
    log.write_text("")
    build(kernel_builder, kernel, USERS[0], tmp_path / "home-1" / "user", ccache=cache,
          python=python_with_torch_elsewhere(tmp_path / "same-torch"), options=["--no-sandbox"])
    results = ccache_results(log)
    for source in sources:
        assert results[source] in ("direct_cache_hit", "preprocessed_cache_hit"), results
    # c10/macros/Macros.h: every source that includes torch includes it.
    other_torch = python_with_torch_elsewhere(tmp_path / "other-torch", "c10/macros/Macros.h")
    log.write_text("")
    cached = build(kernel_builder, kernel, USERS[0], tmp_path / "home-2" / "user", ccache=cache,
                   python=other_torch, options=["--no-sandbox"])
    results = ccache_results(log)
    assert results["rmsnorm_kernels.cu"] in ("direct_cache_hit", "preprocessed_cache_hit"), results
    assert results["torch_binding.cpp"] == "cache_miss", results
    assert results["rmsnorm_cuda.cpp"] == "cache_miss", results
    fresh = build(kernel_builder, uncached, USERS[0], tmp_path / "home-3" / "user",
                  python=other_torch, options=["--no-sandbox"])
    assert_same_variants(cached, fresh)
