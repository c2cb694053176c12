# SPDX-License-Identifier: Apache-2.0
"""The C++ API's require_signature with signed kernels (issue 14): examples/relu built once,
signed with `kernel-builder sign` (a team key, and another key) or by a private Sigstore
instance (private_sigstore.py), uploaded with `kernel-builder upload` to `kernelhub serve`
whose config.toml trusts the team key, then loaded by a small C++ program written here with
GetKernelOptions{require_signature = true, trusted_keys}. A refused variant's library must never
be opened: LD_DEBUG=files lists every file the dynamic loader opens.

The program is built as a user builds one: a CMake project written here, configured against
the installed `kernelhub` package (test_loader_cpp.py's `prefix` fixture) and torch.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import copy_built, example_unique_id, run
from test_loader_cpp import TORCH, prefix, pytestmark  # noqa: F401

TOKEN = "cpp-keyed-token"
WORKFLOW = ("https://github.com/huggingface/kernels-community/.github/workflows/"
            "build.yaml@refs/heads/main")

PROGRAM = r"""
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <torch/torch.h>

#include <kernelhub/kernelhub.hpp>

// signed_from_hub REPO_ID VERSION [KEY.pub...]: get_kernel with require_signature and the keys
// (without it when SIGNED_FROM_HUB_OPTIONAL is set).
int main(int argc, char** argv) {
  kernelhub::GetKernelOptions options;
  options.version = static_cast<unsigned>(std::stoul(argv[2]));
  options.backend = "cpu";
  options.require_signature = std::getenv("SIGNED_FROM_HUB_OPTIONAL") == nullptr;
  for (int i = 3; i < argc; ++i) {
    options.trusted_keys.emplace_back(argv[i]);
  }
  try {
    const kernelhub::KernelHandle kernel = kernelhub::get_kernel(argv[1], options);
    const at::Tensor x = torch::randn({4, 64});
    at::Tensor out = torch::empty_like(x);
    kernel.call<void, at::Tensor&, const at::Tensor&>("relu", out, x);
    std::cout << kernel.id() << (torch::equal(out, torch::relu(x)) ? " matches" : " differs")
              << "\n";
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "signed_from_hub: " << error.what() << "\n";
    return 1;
  }
}
"""


CMAKE_LISTS = """
cmake_minimum_required(VERSION 3.25)
project(signed_from_hub LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 20)
# As examples/cpp: any arch list keeps a CUDA torch's package from probing GPUs.
set(TORCH_CUDA_ARCH_LIST "8.0")
find_package(Torch REQUIRED)
find_package(kernelhub CONFIG REQUIRED)
file(GLOB nvidia_lib_dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
set(rpath_link "")
foreach(dir IN LISTS nvidia_lib_dirs)
  list(APPEND rpath_link "-Wl,-rpath-link,${dir}")
endforeach()
add_executable(signed_from_hub signed_from_hub.cpp)
target_link_libraries(signed_from_hub PRIVATE kernelhub::kernelhub ${TORCH_LIBRARIES})
target_link_options(signed_from_hub PRIVATE ${rpath_link})
"""


@pytest.fixture(scope="module")
def program(prefix, tmp_path_factory):  # noqa: F811 (the imported fixture)
    source = tmp_path_factory.mktemp("keyed-cpp-src")
    (source / "signed_from_hub.cpp").write_text(PROGRAM)
    (source / "CMakeLists.txt").write_text(CMAKE_LISTS)
    out = source / "build"
    env = {k: v for k, v in os.environ.items() if k not in ("CMAKE_PREFIX_PATH",
                                                             "LD_LIBRARY_PATH")}
    configure = ["cmake", "-S", source, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_PREFIX_PATH={prefix};{TORCH / 'share' / 'cmake'}"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    for command in (configure, ["cmake", "--build", out]):
        result = subprocess.run([str(a) for a in command], capture_output=True, text=True,
                                env=env, timeout=1200)
        assert result.returncode == 0, result.stdout + result.stderr
    return out / "signed_from_hub", env


@pytest.fixture(scope="module")
def signed_hub(kernel_builder, kernelhub_bin, built_example, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keyed-cpp-hub")
    # examples/relu built for cpu (conftest's built_example, shared: each kernel below is a copy).
    example = built_example("relu", ["cpu"])
    assert example.result.returncode == 0, example.result.stderr
    built = example.kernel
    for name in ("team", "other"):
        run([kernel_builder, "keygen", "--output", tmp / f"{name}.pem"], check=True)
    root = tmp / "root"
    root.mkdir()
    shutil.copy(tmp / "team.pub", root / "team.pub")
    (root / "config.toml").write_text("[organizations.cpp]\ntrustedKernelPublisher = true\n"
                                      "[signing]\ntrusted-keys = [\"team.pub\"]\n")
    (tmp / "tokens").write_text(TOKEN + "\n")
    server = subprocess.Popen([str(kernelhub_bin), "serve", "--root", str(root), "--port", "0",
                               "--token-file", str(tmp / "tokens")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    env = {"HF_ENDPOINT": url, "NO_PROXY": "127.0.0.1,localhost"}
    private_sigstore = pytest.importorskip("private_sigstore")
    sigstore = private_sigstore.PrivateSigstore()
    trusted_root = sigstore.write_trusted_root(tmp / "private_root.json")
    for name in ("team", "other", "tampered", "sigstore", "sigstore-tampered"):
        kernel = tmp / name
        copy_built(built, kernel)
        variant = next((kernel / "build").glob("torch*-cpu-*"))
        if name.startswith("sigstore"):
            (variant / "metadata.json.sigstore").write_bytes(
                sigstore.sign((variant / "metadata.json").read_bytes(), WORKFLOW))
        else:
            key = tmp / ("other.pem" if name == "other" else "team.pem")
            run([kernel_builder, "sign", kernel, "--key", key], check=True)
        if name.endswith("tampered"):
            init = variant / "__init__.py"
            init.write_text(init.read_text() + "# changed after signing\n")
        result = run([kernel_builder, "upload", kernel, "--repo-id", f"cpp/{name}", "--branch",
                      "v1", "--no-check"], env=dict(os.environ, **env, HF_TOKEN=TOKEN))
        assert result.returncode == 0, result.stdout + result.stderr
    yield {"env": env, "tmp": tmp, "root": trusted_root}
    server.terminate()
    server.wait(timeout=10)


def _load(program, signed_hub, name, home: Path, *keys, **extra_env):
    binary, env = program
    env = dict(env, **signed_hub["env"], HF_HOME=str(home), HF_HUB_CACHE=str(home / "cache"),
               XDG_STATE_HOME=str(home / "state"), LD_DEBUG="files", **extra_env)
    for variable in ("HF_HUB_OFFLINE", "KERNELHUB_TRUSTED_KEYS", "KERNELHUB_REQUIRE_SIGNATURE",
                     "KERNELHUB_SIGSTORE_TRUSTED_ROOT"):
        if variable not in extra_env:
            env.pop(variable, None)
    result = subprocess.run([binary, f"cpp/{name}", "1", *map(str, keys)], capture_output=True,
                            text=True, env=env, timeout=300)
    opened = [line for line in result.stderr.splitlines()
              if "file=" in line and "/build/torch" in line]
    return result, opened


def test_a_kernel_signed_with_the_hubs_key_loads(program, signed_hub, tmp_path):
    result, opened = _load(program, signed_hub, "team", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == f"_relu_cpu_{example_unique_id('relu')} matches"
    assert opened


@pytest.mark.parametrize("name, reason", [
    ("other", "which is not a trusted key"),
    ("tampered", "kernel integrity check failed"),
])
def test_another_key_or_a_change_is_refused_before_dlopen(program, signed_hub, name, reason,
                                                         tmp_path):
    result, opened = _load(program, signed_hub, name, tmp_path)
    assert result.returncode == 1
    assert "refusing to load kernel variant" in result.stderr and reason in result.stderr
    assert opened == []


def test_a_change_after_signing_is_refused_without_require_signature(program, signed_hub,
                                                                     tmp_path):
    """Issue 20 item 9: the digest is checked on every load, so the C++ API refuses the variant
    changed after signing (naming the file) before dlopen, signature required or not."""
    result, opened = _load(program, signed_hub, "tampered", tmp_path,
                           SIGNED_FROM_HUB_OPTIONAL="1")
    assert result.returncode == 1
    assert "kernel integrity check failed\nFile hash mismatch for " in result.stderr
    assert opened == []
    loaded, opened = _load(program, signed_hub, "team", tmp_path / "b",
                           SIGNED_FROM_HUB_OPTIONAL="1")
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert opened


def test_the_trusted_keys_option_pins_the_keys(program, signed_hub, tmp_path):
    other = signed_hub["tmp"] / "other.pub"
    result, opened = _load(program, signed_hub, "other", tmp_path / "a", other)
    assert result.returncode == 0, result.stderr[-3000:]
    assert opened
    refused, opened = _load(program, signed_hub, "team", tmp_path / "b", other)
    assert refused.returncode == 1
    assert "which is not a trusted key" in refused.stderr
    assert opened == []


def test_sigstore_signed_kernels_from_cpp(program, signed_hub, tmp_path):
    """A kernel signed for kernels-community's workflow by a private Sigstore loads when its
    root is trusted; the same kernel changed after signing, or without the root, does not."""
    root = str(signed_hub["root"])
    result, opened = _load(program, signed_hub, "sigstore", tmp_path / "a",
                           KERNELHUB_SIGSTORE_TRUSTED_ROOT=root)
    assert result.returncode == 0, result.stderr[-3000:]
    assert opened
    tampered, opened = _load(program, signed_hub, "sigstore-tampered", tmp_path / "b",
                             KERNELHUB_SIGSTORE_TRUSTED_ROOT=root)
    assert tampered.returncode == 1
    assert "kernel integrity check failed" in tampered.stderr
    assert opened == []
    untrusted, opened = _load(program, signed_hub, "sigstore", tmp_path / "c")
    assert untrusted.returncode == 1
    assert "metadata signature verification failed" in untrusted.stderr
    assert opened == []
