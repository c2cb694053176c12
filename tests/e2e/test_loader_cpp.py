# SPDX-License-Identifier: Apache-2.0
"""The C++ API (include/kernelhub/kernelhub.hpp) as a user gets it: `cmake --install` of the
build tree into a fresh prefix gives the CMake package `kernelhub` (lib/cmake/kernelhub), and
examples/cpp is configured against that prefix and torch's CMake folder alone
(find_package(kernelhub CONFIG), target kernelhub::kernelhub), without our source tree.
relu_side_by_side loads two builds of examples/relu (different ids) into one C++ process
without Python, and relu_from_hub loads relu from `kernelhub serve` (uploaded by
`kernel-builder upload`) with kernelhub::get_kernel; both call relu through the Torch
dispatcher and compare with torch::relu.

The build tree (KERNELHUB_BUILD_DIR, default build/) must have the C++ API, as
scripts/setup.sh configures it (KERNELHUB_BUILD_TORCH_API=ON).
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, example_unique_id, run, venv_torch

PYTHON = VENV_BIN / "python"
SHARED_ID = example_unique_id("relu")  # conftest's built_example("relu", ["cpu"])
BUILD = REPO_ROOT / os.environ.get("KERNELHUB_BUILD_DIR", "build")


def _torch_dir():
    """The venv's torch package folder (found without importing torch), or None."""
    if not PYTHON.exists():
        return None
    found = subprocess.run(
        [str(PYTHON), "-c", "import importlib.util as u; s = u.find_spec('torch'); "
         "print(s.submodule_search_locations[0] if s else '')"],
        capture_output=True, text=True, timeout=60)
    return Path(found.stdout.strip()) if found.stdout.strip() else None


TORCH = _torch_dir()
# The core's namespaces and the private libraries: none may show in the installed interface.
PRIVATE = ["curl", "ssl", "crypto", "toml", "fmt", "git2", "nlohmann", "kh_", "Boost", "CLI11"]
CORE_SYMBOL = re.compile(
    r"kernelhub::(util|types|config|metadata|verify|variants|hub|cache|loader)::|toml::|fmt::")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(TORCH is None or shutil.which("cmake") is None
                       or shutil.which("ninja") is None,
                       reason="needs the venv's torch, cmake and ninja"),
]


def shared_build(built_example) -> Path:
    """examples/relu built for cpu, shared with other files: read only."""
    example = built_example("relu", ["cpu"])
    assert example.result.returncode == 0, example.result.stderr
    return example.kernel


def build(kernel_builder, dest: Path, unique_id: str) -> Path:
    shutil.copytree(REPO_ROOT / "examples" / "relu", dest, ignore=shutil.ignore_patterns("build"))
    toml = dest / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    run([kernel_builder, "build", dest, "--python", PYTHON, "--unique-id", unique_id,
         "--skip-checks"], check=True)
    return dest


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    """The build tree installed into a new prefix, as `cmake --install` does for a user."""
    prefix = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", BUILD, "--prefix", prefix], check=True)
    # The two programs (over 400 MB with their debug info) play no part here.
    shutil.rmtree(prefix / "bin", ignore_errors=True)
    return prefix


@pytest.fixture(scope="module")
def programs(prefix, tmp_path_factory):
    """examples/cpp configured with only the prefix and torch's CMake folder, and built."""
    out = tmp_path_factory.mktemp("cpp")
    torch_cmake = TORCH / "share" / "cmake"
    configure = ["cmake", "-S", REPO_ROOT / "examples" / "cpp", "-B", out, "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix};{torch_cmake}",
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    env = {k: v for k, v in os.environ.items() if k not in ("CMAKE_PREFIX_PATH",
                                                             "LD_LIBRARY_PATH")}
    result = subprocess.run([str(a) for a in configure], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    result = subprocess.run(["cmake", "--build", str(out)], capture_output=True, text=True,
                            env=env, timeout=1200)
    assert result.returncode == 0, result.stdout + result.stderr
    return out, env


def test_install_gives_a_cmake_package_with_a_private_core(prefix):
    package = prefix / "lib" / "cmake" / "kernelhub"
    for name in ("kernelhubConfig.cmake", "kernelhubConfigVersion.cmake",
                 "kernelhubTargets.cmake"):
        assert (package / name).is_file(), (
            f"{name} not installed from {BUILD}: {sorted(prefix.rglob('*'))} (the build needs "
            "-DKERNELHUB_BUILD_TORCH_API=ON, as scripts/setup.sh configures it)")
    assert (prefix / "include" / "kernelhub" / "kernelhub.hpp").is_file()
    targets = "".join(p.read_text() for p in package.glob("kernelhubTargets*.cmake"))
    assert "add_library(kernelhub::kernelhub SHARED IMPORTED)" in targets
    # The public interface is torch alone: no private library, no path into our source tree.
    interface = re.search(r'INTERFACE_LINK_LIBRARIES "([^"]*)"', targets)
    assert interface and interface.group(1) == "torch", targets
    leaked = [name for name in PRIVATE if name in targets]
    assert not leaked, (leaked, targets)
    assert str(REPO_ROOT) not in targets
    # The library exports the API, not the core it is built from: no function or object of the
    # core's archives (strong symbols; the API's own inline template copies are weak).
    library = prefix / "lib" / "libkernelhub.so"
    symbols = subprocess.run(["nm", "-DC", "--defined-only", library], capture_output=True,
                             text=True, check=True).stdout
    assert "kernelhub::detail::get_local_kernel" in symbols
    # Only kernelhub::detail's functions (libkernelhub.map): not even the template copies the
    # library's own sources instantiate.
    exported = [line.split(maxsplit=2)[2] for line in symbols.splitlines()
                if len(line.split(maxsplit=2)) == 3]
    assert exported and all(name.startswith("kernelhub::detail::") for name in exported), [
        name for name in exported if not name.startswith("kernelhub::detail::")][:10]
    strong = [line for line in symbols.splitlines()
              if len(line.split(maxsplit=2)) == 3 and line.split(maxsplit=2)[1] in "TDBR"]
    core = [line for line in strong if CORE_SYMBOL.search(line.split(maxsplit=2)[2])]
    assert not core, core[:10]


def test_library_links_no_libtorch_and_the_package_takes_any_torch(prefix, tmp_path):
    """Issue 28: libkernelhub is torch-free (what needs libtorch is inline in the header, built
    with the program's torch), so one build serves any torch and can ship in the wheel: it
    names no torch library and has no run path into a torch, and the package accepts a Torch
    of another minor version than the venv's."""
    library = prefix / "lib" / "libkernelhub.so"
    dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, text=True,
                             check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    assert needed and not [n for n in needed if re.match(r"lib(torch|c10|cuda)", n)], needed
    assert "RUNPATH" not in dynamic and "RPATH" not in dynamic, dynamic
    major, minor = venv_torch()["version"].split("+")[0].split(".")[:2]
    other = f"{major}.{int(minor) + 1}.0"
    project = tmp_path / "project"
    project.mkdir()
    # A stand-in for a Torch package the project found first (the package keeps it).
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(other_torch LANGUAGES CXX)\n"
        "add_library(torch INTERFACE IMPORTED)\n"
        f"set(Torch_VERSION {other})\n"
        "find_package(kernelhub CONFIG REQUIRED)\n"
        "get_target_property(interface kernelhub::kernelhub INTERFACE_LINK_LIBRARIES)\n"
        'message(STATUS "kernelhub found, interface ${interface}")\n')
    result = run(["cmake", "-S", project, "-B", tmp_path / "out", f"-DCMAKE_PREFIX_PATH={prefix}"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kernelhub found, interface torch" in result.stdout, result.stdout


def test_header_refuses_the_pre_cxx11_abi(prefix, tmp_path):
    """The library hands std::string and std::filesystem::path to the program, so a program
    compiled with the old libstdc++ ABI (torch wheels before 2.7) is stopped at compile time with
    the reason, instead of failing to link."""
    source = tmp_path / "program.cpp"
    source.write_text("#include <kernelhub/kernelhub.hpp>\n")
    includes = [f"-I{prefix / 'include'}", f"-I{TORCH / 'include'}",
                f"-I{TORCH / 'include' / 'torch' / 'csrc' / 'api' / 'include'}"]
    results = {}
    for abi in (0, 1):
        results[abi] = subprocess.run(
            ["g++", "-std=c++20", "-E", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", *includes, str(source),
             "-o", os.devnull], capture_output=True, text=True, timeout=300)
    assert results[1].returncode == 0, results[1].stderr[-2000:]
    assert results[0].returncode != 0
    assert "kernelhub's C++ API needs _GLIBCXX_USE_CXX11_ABI=1" in results[0].stderr


def test_examples_build_from_the_package_alone(prefix, programs):
    out, _ = programs
    commands = json.loads((out / "compile_commands.json").read_text())
    assert {Path(c["file"]).name for c in commands} == {"relu_side_by_side.cpp",
                                                       "relu_from_hub.cpp"}
    for command in commands:
        text = command.get("command") or " ".join(command["arguments"])
        # The API's header comes from the prefix, nothing from our tree but the example itself.
        assert f"{prefix}/include" in text
        assert f"{REPO_ROOT}/include" not in text and f"{REPO_ROOT}/src" not in text, text
    cache = (out / "CMakeCache.txt").read_text()
    assert f"kernelhub_DIR:PATH={prefix}/lib/cmake/kernelhub" in cache


def test_cpp_example_runs_two_builds_side_by_side(kernel_builder, built_example, prefix, programs,
                                                 tmp_path):
    out, env = programs
    a = shared_build(built_example)
    b = build(kernel_builder, tmp_path / "relu-b", "cppb")
    program = out / "relu_side_by_side"
    result = subprocess.run([program, a, b], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [f"_relu_cpu_{SHARED_ID}", "_relu_cpu_cppb"]
    assert all(line.endswith("matches torch::relu") for line in lines)
    # no Python in the process: the program does not link libpython; the API's library is
    # the installed one, found without LD_LIBRARY_PATH
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True, env=env).stdout
    assert "libpython" not in ldd
    assert re.search(rf"libkernelhub\.so\S* => {re.escape(str(prefix))}/lib/", ldd), ldd


def test_cpp_get_kernel_loads_from_kernelhub_serve(kernel_builder, kernelhub_bin, built_example,
                                                   programs, tmp_path):
    out, env = programs
    kernel = shared_build(built_example)
    root = tmp_path / "root"
    root.mkdir()
    (root / "config.toml").write_text("[organizations.cpp]\ntrustedKernelPublisher = true\n")
    (tmp_path / "tokens").write_text("cpp-token\n")
    server = subprocess.Popen([str(kernelhub_bin), "serve", "--root", str(root), "--port", "0",
                               "--token-file", str(tmp_path / "tokens")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        hub_env = dict(env, HF_ENDPOINT=url, HF_HOME=str(tmp_path / "home"),
                       HF_HUB_CACHE=str(tmp_path / "cache"), NO_PROXY="127.0.0.1,localhost")
        hub_env.pop("HF_HUB_OFFLINE", None)
        run([kernel_builder, "upload", kernel, "--repo-id", "cpp/relu", "--branch", "v1"],
            env=dict(hub_env, HF_TOKEN="cpp-token"), check=True)
        result = subprocess.run([out / "relu_from_hub", "cpp/relu", "1"], capture_output=True,
                                text=True, env=hub_env, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith(f"_relu_cpu_{SHARED_ID} ")
        assert result.stdout.strip().endswith("matches torch::relu")
        assert list((tmp_path / "cache" / "kernels--cpp--relu" / "snapshots").iterdir())
        # An unknown version: the reference's error, from C++.
        missing = subprocess.run([out / "relu_from_hub", "cpp/relu", "7"], capture_output=True,
                                 text=True, env=hub_env, timeout=300)
        assert missing.returncode == 1
        assert "Version 7 not found, available versions: 1" in missing.stderr
        # The device argument (scripts/gpu-checks.sh passes cuda): cpu is the default, spelled
        # out it loads the same variant; anything else is a usage error before any load.
        explicit = subprocess.run([out / "relu_from_hub", "cpp/relu", "1", "cpu"],
                                  capture_output=True, text=True, env=hub_env, timeout=300)
        assert explicit.returncode == 0, explicit.stderr
        assert explicit.stdout == result.stdout
        unknown = subprocess.run([out / "relu_from_hub", "cpp/relu", "1", "tpu"],
                                 capture_output=True, text=True, env=hub_env, timeout=300)
        assert unknown.returncode == 2
        assert 'DEVICE must be cpu or cuda, not "tpu"' in unknown.stderr
        # KERNELHUB_REQUIRE_SIGNATURE (issue 14): the unsigned upload is refused before its
        # library is opened (LD_DEBUG lists every file the dynamic loader opens).
        refused = subprocess.run([out / "relu_from_hub", "cpp/relu", "1"], capture_output=True,
                                 text=True, timeout=300,
                                 env=dict(hub_env, KERNELHUB_REQUIRE_SIGNATURE="1",
                                          LD_DEBUG="files"))
        assert refused.returncode == 1
        assert "(signature required): signature not found" in refused.stderr
        assert f"_relu_cpu_{SHARED_ID}" not in refused.stderr
        opened = [line for line in refused.stderr.splitlines() if "file=" in line]
        assert opened and not any("/build/torch" in line for line in opened), opened
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_cpp_refuses_a_kernel_that_needs_a_newer_kernels(kernel_builder, programs, tmp_path):
    """Issue 21: a variant whose metadata.json says `kernels-minver: 999.1.0` is refused by the
    C++ API as by Python's loaders, with the kernel, its variant and both versions named, before
    its library is opened (LD_DEBUG lists every file the dynamic loader opens)."""
    out, env = programs
    kernel = build(kernel_builder, tmp_path / "relu", "cppminver")
    [metadata_file] = kernel.glob("build/*/metadata.json")
    metadata = json.loads(metadata_file.read_text())
    metadata["kernels-minver"] = "999.1.0"
    metadata_file.write_text(json.dumps(metadata))
    result = subprocess.run([out / "relu_side_by_side", kernel], capture_output=True, text=True,
                            env=dict(env, LD_DEBUG="files"), timeout=300)
    assert result.returncode != 0, result.stdout
    variant = metadata_file.parent.name
    assert (f"Kernel 'relu' variant '{variant}' requires kernels>=999.1.0, but version 0.17.2 "
            "is installed (the kernels API of kernelhub " in result.stderr), result.stderr[-2000:]
    opened = [line for line in result.stderr.splitlines() if "file=" in line]
    assert opened and not any("_relu_cpu_cppminver" in line for line in opened), opened
    # The same build without the requirement loads.
    del metadata["kernels-minver"]
    metadata_file.write_text(json.dumps(metadata))
    loaded = subprocess.run([out / "relu_side_by_side", kernel], capture_output=True, text=True,
                            env=env, timeout=300)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr


def test_cpp_get_kernel_loads_through_a_mirror(kernel_builder, kernelhub_bin, built_example,
                                               programs, tmp_path):
    """issue 23 §1: relu_from_hub loads through `kernelhub serve --mirror` in front of the hub
    the kernel was uploaded to, and again with that hub stopped (docs/mirror.md)."""
    out, env = programs
    kernel = shared_build(built_example)
    trusted = "[organizations.cpp]\ntrustedKernelPublisher = true\n"
    servers = {}
    for name in ("upstream", "mirror"):
        root = tmp_path / name
        root.mkdir()
        (root / "config.toml").write_text(trusted)
        (tmp_path / f"{name}-tokens").write_text("cpp-token\n")
        args = [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0",
                "--token-file", str(tmp_path / f"{name}-tokens")]
        if name == "mirror":
            args += ["--mirror", servers["upstream"][1]]
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True)
        servers[name] = (process, process.stdout.readline().strip())
    try:
        def hub_env(url, cache):
            env_ = dict(env, HF_ENDPOINT=url, HF_HOME=str(tmp_path / "home"),
                        HF_HUB_CACHE=str(cache), NO_PROXY="127.0.0.1,localhost")
            env_.pop("HF_HUB_OFFLINE", None)
            return env_

        run([kernel_builder, "upload", kernel, "--repo-id", "cpp/relu", "--branch", "v1"],
            env=dict(hub_env(servers["upstream"][1], tmp_path / "up"), HF_TOKEN="cpp-token"),
            check=True)
        mirror_url = servers["mirror"][1]
        for cache in ("cache-1", "cache-2"):
            result = subprocess.run([out / "relu_from_hub", "cpp/relu", "1"],
                                    capture_output=True, text=True, timeout=300,
                                    env=hub_env(mirror_url, tmp_path / cache))
            assert result.returncode == 0, result.stdout + result.stderr
            assert result.stdout.strip().endswith("matches torch::relu")
            # The second load, from a fresh cache, with the upstream gone.
            servers["upstream"][0].terminate()
            servers["upstream"][0].wait(timeout=10)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=10)
