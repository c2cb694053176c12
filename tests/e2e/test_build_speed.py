# SPDX-License-Identifier: Apache-2.0
"""What makes `kernel-builder build` fast without making its checks weaker (issue 13 item 15).

The load check's Python (importing torch and kernels: seconds) starts while the variant
compiles and is handed the variant once it is built; a no-op rebuild starts none. A wrapper
around the venv's python records when each load-check interpreter starts.
"""
import shutil

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja")


def cpu_relu(destination):
    shutil.copytree(REPO_ROOT / "examples" / "relu", destination,
                    ignore=shutil.ignore_patterns("build", "relu_cuda", "__pycache__"))
    toml = (destination / "build.toml").read_text()
    (destination / "build.toml").write_text(
        toml[:toml.index("# Two archs")].replace('["cpu", "cuda"]', '["cpu"]'))
    return destination


def logging_python(folder):
    """python, but each start of a load-check script that waits for its variant on stdin is
    logged (the time, in seconds since the epoch) to folder/load-checks.log."""
    log = folder / "load-checks.log"
    wrapper = folder / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$2" in *sys.stdin.readline*) date +%s.%N >> "' + str(log) + '";; esac\n'
        'exec "' + str(PYTHON) + '" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def test_the_load_checks_python_starts_while_the_variant_compiles(kernel_builder, tmp_path):
    kernel = cpu_relu(tmp_path / "relu")
    python, log = logging_python(tmp_path)
    argv = [kernel_builder, "build", kernel, "--python", python, "--unique-id", "speed"]
    result = run(argv, env={"CCACHE_BASEDIR": str(kernel)})
    assert result.returncode == 0, result.stderr
    assert "load check passed (" in result.stderr
    starts = [float(line) for line in log.read_text().split()]
    assert len(starts) == 1, starts  # one interpreter for the one variant
    # It started before the extension module was linked, so its imports overlapped the build.
    module = next((kernel / "build" / ".kernelhub").glob("*/cmake/*.abi3.so"))
    assert starts[0] < module.stat().st_mtime, (starts, module.stat().st_mtime)

    # A no-op rebuild compiles nothing and starts no load-check interpreter.
    again = run(argv, env={"CCACHE_BASEDIR": str(kernel)})
    assert again.returncode == 0, again.stderr
    assert "load check passed before" in again.stderr
    assert len(log.read_text().split()) == 1

    # An edited source compiles again: the interpreter starts and the check runs.
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    # (A new function: a comment alone gives the same module, which passed already.)
    source.write_text(source.read_text() + "\nint relu_edited() { return 1; }\n")
    edited = run(argv, env={"CCACHE_BASEDIR": str(kernel)})
    assert edited.returncode == 0, edited.stderr
    assert "load check passed (" in edited.stderr
    assert len(log.read_text().split()) == 2


def test_a_prestarted_load_check_still_catches_a_variant_that_does_not_load(kernel_builder,
                                                                            tmp_path):
    # A symbol no library defines links into a module but fails its dlopen: only loading
    # finds it, and the interpreter started during the build must find it as a fresh one does.
    kernel = cpu_relu(tmp_path / "relu")
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text() + "\nvoid defined_nowhere();\n"
                      "void (*keep_defined_nowhere)() = &defined_nowhere;\n")
    python, log = logging_python(tmp_path)
    result = run([kernel_builder, "build", kernel, "--python", python, "--unique-id", "bad"],
                 env={"CCACHE_BASEDIR": str(kernel)})
    assert result.returncode == 1, result.stderr
    assert "kernels.get_local_kernel cannot load it" in result.stderr
    assert "defined_nowhere" in result.stderr  # the loader's own reason
    assert len(log.read_text().split()) == 1


def test_a_variant_that_crashes_at_exit_still_fails_the_load_check(kernel_builder, tmp_path):
    # The check's interpreter skips the garbage collector's last walk over torch's objects (half
    # a second of every build) but still exits through the kernel's static destructors, so a
    # module that aborts on the way out fails the check, as it would end a user's program.
    kernel = cpu_relu(tmp_path / "relu")
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text() + "\n#include <cstdlib>\nnamespace {\n"
                      "struct AbortsAtExit { ~AbortsAtExit() { std::abort(); } };\n"
                      "AbortsAtExit aborts_at_exit;\n}\n")
    result = run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id", "exit"],
                 env={"CCACHE_BASEDIR": str(kernel)})
    assert result.returncode == 1, result.stderr
    assert "load check passed" not in result.stderr
    assert "kernels.get_local_kernel cannot load it" in result.stderr, result.stderr


def test_a_fresh_build_tree_takes_cmakes_compiler_detection_from_the_cache(kernel_builder,
                                                                          tmp_path):
    # CMake's compiler detection (compiles with every compiler: seconds with nvcc) and the
    # project's compiler checks run once per toolchain; later fresh build trees copy what they
    # found from kernel-builder's cache (compat/compiler_cache.cmake) and build the same bytes.
    cache = tmp_path / "cache"
    env = {"KERNELHUB_CACHE_DIR": str(cache), "CCACHE_DISABLE": "1"}
    modules = []
    outputs = []
    for name in ("first", "second"):
        kernel = cpu_relu(tmp_path / name / "relu")
        result = run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id",
                      "compilers", "-v"], env=env)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout + result.stderr)
        modules.append(next((kernel / "build").glob("torch*-cpu-*/*.abi3.so")).read_bytes())
    assert "Detecting CXX compiler ABI info" in outputs[0]
    assert "Performing Test KERNELHUB_HAS_NO_GNU_UNIQUE" in outputs[0]
    entries = list((cache / "stdcxx").glob("compilers-*"))
    assert len(entries) == 1, entries
    assert (entries[0] / "CMakeCXXCompiler.cmake").is_file()
    checks = (entries[0] / "checks.cmake").read_text()
    assert "KERNELHUB_HAS_NO_GNU_UNIQUE" in checks and "CMAKE_OBJCOPY" in checks
    assert "Detecting CXX compiler ABI info" not in outputs[1], outputs[1]
    assert "Performing Test" not in outputs[1], outputs[1]
    assert modules[0] == modules[1]

    # Another compiler (here g++ behind a wrapper named by CXX) is another toolchain: detected
    # again, in an entry of its own.
    wrapper = tmp_path / "g++-wrapper"
    wrapper.write_text('#!/bin/sh\nexec g++ "$@"\n')
    wrapper.chmod(0o755)
    kernel = cpu_relu(tmp_path / "third" / "relu")
    result = run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id",
                  "compilers", "-v", "--no-sandbox"], env=dict(env, CXX=str(wrapper)))
    assert result.returncode == 0, result.stderr
    assert "Detecting CXX compiler ABI info" in result.stdout + result.stderr
    assert len(list((cache / "stdcxx").glob("compilers-*"))) == 2
