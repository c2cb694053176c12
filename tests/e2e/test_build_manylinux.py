# SPDX-License-Identifier: Apache-2.0
"""Built kernels meet manylinux_2_28 on this machine's newer glibc (docs/build.md).

examples/cxx20-symbols calls floating-point std::to_chars (GLIBCXX_3.4.29) and std::pmr
(GLIBCXX_3.4.26/28). `kernel-builder build` (check-abi as an error by default) must pass, the
REFERENCE kernel-abi-check must find nothing under manylinux_2_28, the symbols must be
private copies inside the kernel, and the op must work through the reference loader and the
example's own tests. A kernel that calls a glibc function with no version at or below 2.28
(gettid, GLIBC_2.30) cannot be fixed: the build must fail naming it. examples/relu is
checked in test_check_abi_built_variants.py.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, run
from test_check_abi import our_findings, ours, reference_findings

PYTHON = VENV_BIN / "python"
EXAMPLES = REPO_ROOT / "examples"

pytestmark = pytest.mark.skipif(
    not PYTHON.exists() or shutil.which("cmake") is None or shutil.which("ninja") is None,
    reason="needs the .venv with torch, cmake and ninja",
)


COMPAT = REPO_ROOT / "templates" / "project" / "compat"
# Calls that need GLIBC 2.29-2.34 and GLIBCXX 3.4.26-3.4.29 when built plainly on glibc 2.36.
SNIPPET = r"""
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <pthread.h>
#include <vector>

static void* twice(void* arg) { *static_cast<double*>(arg) *= 2; return nullptr; }

extern "C" __attribute__((visibility("default"))) int probe(char* out) {
  double x = std::exp(1.0) + std::pow(2.0, 0.5) + std::log(3.0);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, twice, &x) != 0 || pthread_join(thread, nullptr) != 0) {
    return -1;
  }
  std::pmr::monotonic_buffer_resource arena;
  std::pmr::vector<double> values({x, 0.1}, &arena);
  auto shared = std::make_shared<int>(1);  // reference counting reads __libc_single_threaded
  std::mutex mutex;
  std::condition_variable ready;
  std::unique_lock lock(mutex);
  ready.wait_for(lock, std::chrono::milliseconds(1));
  auto end = std::to_chars(out, out + 64, values[1]).ptr;
  *end = 0;
  return *shared;
}
"""


def compile_snippet(directory: Path, compat: bool) -> Path:
    source = directory / "snippet.cpp"
    source.write_text(SNIPPET)
    library = directory / ("compat.so" if compat else "plain.so")
    argv = ["g++", "-std=c++20", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-o",
            str(library)]
    if compat:
        archive = directory / "libkernelhub_stdcxx_nonshared.a"
        subprocess.run([str(PYTHON), str(COMPAT / "stdcxx_nonshared.py"), "--cxx", "g++",
                        "--nm", "nm", "--ar", "ar", "--objcopy", "objcopy",
                        "--pins", str(COMPAT / "glibc_pins.h"), "--output", str(archive)],
                       check=True, capture_output=True)
        argv += ["-include", str(COMPAT / "glibc_pins.h"), str(source),
                 str(COMPAT / "glibc_compat.cpp"),
                 "-Wl,--exclude-libs,libkernelhub_stdcxx_nonshared.a", str(archive)]
    else:
        argv.append(str(source))
    subprocess.run(argv + ["-lpthread"], check=True)
    return library


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("objcopy") is None,
                    reason="needs g++ and binutils")
def test_compat_files_make_a_plain_library_conform(tmp_path):
    # The generated project's compat/ files, applied by hand to a library that needs newer
    # glibc and libstdc++ versions: the reference finds violations without them, none with.
    kernel_abi_check = pytest.importorskip("kernel_abi_check")
    plain = reference_findings(kernel_abi_check.ObjectFile(str(compile_snippet(tmp_path, False))))
    if not plain:
        pytest.skip("this machine's glibc and libstdc++ already meet manylinux_2_28")
    library = compile_snippet(tmp_path, True)
    assert reference_findings(kernel_abi_check.ObjectFile(str(library))) == set()
    # And it still works: the pinned and privately linked functions are called for real.
    import ctypes
    out = ctypes.create_string_buffer(64)
    assert ctypes.CDLL(str(library)).probe(out) == 1
    assert out.value == b"0.1"


# A library that calls std::ostringstream::str() (GLIBCXX_3.4.29 on GCC 12) and looks up a
# locale facet.
STRINGBUF_SNIPPET = r"""
#include <locale>
#include <sstream>
#include <string>
extern "C" __attribute__((visibility("default"))) int probe(char* out) {
  std::ostringstream stream;
  stream << 7 << std::use_facet<std::numpunct<char>>(std::locale()).decimal_point();
  const std::string text = stream.str();
  text.copy(out, text.size());
  out[text.size()] = 0;
  return static_cast<int>(text.size());
}
"""


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("objdump") is None
                    or not Path("/usr/include/toml++/toml.h").exists(),
                    reason="needs g++, binutils and toml++'s headers")
def test_keep_weak_links_a_library_with_its_own_template_copies(tmp_path):
    """libkernelhub (cmake/PortableBuild.cmake) links toml++'s compiled part, which holds its own
    copy of basic_stringbuf's destructor in the COMDAT group that the archive's sstream-inst.o
    holds too. With the archive's weak definitions made local the link fails (the linker keeps
    toml++'s group, and sstream-inst.o's references point into its discarded copy);
    --keep-weak-defined-by (the rest of the link) links, with nothing above GLIBCXX_3.4.24, the
    facet lookup still the system's (a private locale::id would throw std::bad_cast), and the
    library works."""
    pins = COMPAT / "glibc_pins.h"
    toml = tmp_path / "toml.o"
    subprocess.run(["g++", "-std=c++20", "-O3", "-fPIC", "-DTOML_HEADER_ONLY=0", "-include",
                    str(pins), "-c", str(REPO_ROOT / "cmake" / "portable" / "tomlplusplus_impl.cpp"),
                    "-o", str(toml)], check=True)
    source = tmp_path / "snippet.cpp"
    source.write_text(STRINGBUF_SNIPPET)
    links = {}
    for keep_weak in (False, True):
        archive = tmp_path / f"nonshared-{keep_weak}.a"
        subprocess.run([str(PYTHON), str(COMPAT / "stdcxx_nonshared.py"), "--cxx", "g++",
                        "--nm", "nm", "--ar", "ar", "--objcopy", "objcopy", "--pins", str(pins),
                        "--output", str(archive),
                        *(["--keep-weak-defined-by", str(toml)] if keep_weak else [])],
                       check=True, capture_output=True)
        library = tmp_path / f"lib-{keep_weak}.so"
        # -O0: the stream's calls stay calls, so the archive's sstream objects are linked in.
        links[keep_weak] = (library, subprocess.run(
            ["g++", "-std=c++20", "-O0", "-fPIC", "-shared", "-fvisibility=hidden", "-include",
             str(pins), str(source), str(toml), str(COMPAT / "glibc_compat.cpp"), "-o",
             str(library), "-Wl,--exclude-libs,ALL", str(archive), "-lpthread"],
            capture_output=True, text=True))
    _, refused = links[False]
    assert refused.returncode != 0 and "discarded section" in refused.stderr, refused.stderr[-2000:]
    library, linked = links[True]
    assert linked.returncode == 0, linked.stderr[-2000:]
    dynamic = subprocess.run(["objdump", "-T", str(library)], capture_output=True, text=True,
                             check=True).stdout
    newer = re.findall(r"GLIBCXX_3\.4\.(?:2[5-9]|3\d)|CXXABI_1\.3\.1[2-9]", dynamic)
    assert not newer, newer
    assert re.search(r"\*UND\*.*\(GLIBCXX_[\d.]+\)\s+_ZSt9use_facetINSt7__cxx118numpunctIcEEE",
                     dynamic), dynamic
    import ctypes
    out = ctypes.create_string_buffer(16)
    assert ctypes.CDLL(str(library)).probe(out) == 2
    assert out.value == b"7."


@pytest.fixture(scope="module")
def cxx20(built_example):
    """examples/cxx20-symbols as conftest's built_example builds it (check-abi on, an error)."""
    example = built_example("cxx20-symbols")
    [variant] = example.summary["variants"]
    [library] = Path(variant["path"]).glob("*.abi3.so")
    return example.kernel, Path(variant["path"]), library


def test_cxx20_kernel_meets_manylinux_2_28(kernel_builder, cxx20):
    kernel_dir, _, library = cxx20
    kernel_abi_check = pytest.importorskip("kernel_abi_check")
    assert reference_findings(kernel_abi_check.ObjectFile(str(library))) == set()
    report = ours(kernel_builder, [str(kernel_dir)])
    assert report["ok"], report["violations"]
    assert our_findings(report, library) == set()


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs binutils' readelf")
def test_newer_libstdcxx_functions_are_private_copies(cxx20):
    _, _, library = cxx20
    out = subprocess.run(["readelf", "-W", "--syms", "-C", str(library)], capture_output=True,
                         text=True, check=True).stdout
    rows = [line.split(None, 7) for line in out.splitlines() if line.strip()[:1].isdigit()]
    to_chars = [row for row in rows
                if len(row) == 8 and row[7].startswith("std::to_chars(char*, char*, double")]
    # Defined in the kernel (not UND) and not visible outside it.
    assert to_chars and all(row[6] != "UND" for row in to_chars), to_chars
    assert all(row[4] == "LOCAL" or row[5] == "HIDDEN" for row in to_chars), to_chars
    dynamic = subprocess.run(["readelf", "-W", "--dyn-syms", str(library)], capture_output=True,
                             text=True, check=True).stdout
    assert "GLIBCXX_3.4.29" not in dynamic and "GLIBC_2.3" not in dynamic.replace("GLIBC_2.3.", "")


def test_cxx20_kernel_runs_through_the_reference_loader(cxx20):
    kernel_dir, _, _ = cxx20
    script = f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel_dir)!r}), backend="cpu")
print(json.dumps(k.format_floats(torch.tensor([0.1, 1e300, -2.0], dtype=torch.float64))))
"""
    result = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["0.1", "1e+300", "-2"]


def test_cxx20_example_tests_pass(cxx20, tmp_path):
    # The variant importable as `cxx20_symbols`, as `kernel-builder test` arranges it.
    kernel_dir, variant, _ = cxx20
    (tmp_path / "cxx20_symbols").symlink_to(variant, target_is_directory=True)
    result = subprocess.run([str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-m", "kernels_ci", "-W", "ignore::pytest.PytestUnknownMarkWarning",
                             str(kernel_dir / "tests")],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def relu_cpu_calling(tmp_path: Path, prelude: str) -> Path:
    """examples/relu, cpu only, its cpu source starting with `prelude`."""
    kernel_dir = tmp_path / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel_dir, ignore=shutil.ignore_patterns("build"))
    toml = kernel_dir / "build.toml"
    toml.write_text(re.sub(r"backends = \[.*\]", 'backends = ["cpu"]', toml.read_text()))
    source = kernel_dir / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(prelude + source.read_text())
    return kernel_dir


def test_unfixable_glibc_symbol_fails_the_build_by_name(kernel_builder, tmp_path):
    # gettid appeared in GLIBC_2.30 and has no older version to pin to.
    kernel_dir = relu_cpu_calling(
        tmp_path, "#include <unistd.h>\nint relu_thread_id() { return gettid(); }\n")
    strict = run([kernel_builder, "build", kernel_dir, "--python", PYTHON])
    assert strict.returncode == 1, strict.stderr
    assert "gettid" in strict.stderr and "GLIBC_2.30" in strict.stderr, strict.stderr
    lenient = run([kernel_builder, "build", kernel_dir, "--python", PYTHON, "--abi-check", "warn"])
    assert lenient.returncode == 0, lenient.stderr
    assert "gettid" in lenient.stderr


def build_and_list_undefined(kernel_builder, kernel_dir: Path) -> tuple[Path, str]:
    """Builds the cpu-only copy (check-abi an error) and gives its library and the dynamic
    symbols the library leaves undefined (nm -D)."""
    result = run([kernel_builder, "build", kernel_dir, "--python", PYTHON])
    assert result.returncode == 0, result.stderr
    library = next((kernel_dir / "build").glob("torch*-cpu-*/*.so"))
    undefined = subprocess.run(["nm", "-D", "--undefined-only", library], capture_output=True,
                               text=True, check=True).stdout
    return library, undefined


def test_arc4random_is_answered_inside_the_kernel(kernel_builder, tmp_path):
    # libstdc++ 13 built against glibc 2.36 or later takes std::random_device's entropy from
    # arc4random (GLIBC_2.36, no older version to pin to): the GPU machine's GCC 13 put it into
    # rmsnorm's private copy of random_device (scripts/gpu-checks.sh, 2026-11-30). A kernel that
    # calls it itself stands in for that object: compat/glibc_compat.cpp answers it inside the
    # kernel, so the build passes check-abi and the .so asks glibc for no arc4random.
    if "arc4random" not in Path("/usr/include/stdlib.h").read_text(errors="replace"):
        pytest.skip("this glibc declares no arc4random")
    kernel_dir = relu_cpu_calling(
        tmp_path, "#include <stdlib.h>\nunsigned relu_random() { return arc4random(); }\n")
    library, undefined = build_and_list_undefined(kernel_builder, kernel_dir)
    assert "arc4random" not in undefined, undefined
    local = subprocess.run(["nm", library], capture_output=True, text=True, check=True).stdout
    assert re.search(r" t arc4random$", local, re.M), "arc4random is not defined in the kernel"


def test_c23_strtol_family_is_answered_inside_the_kernel(kernel_builder, tmp_path):
    # glibc 2.38 and later turn strtol and its siblings (std::stoi among their callers) into
    # __isoc23_strtol and so on (GLIBC_2.38, no older version); the GPU machine's libstdc++ 13
    # objects called __isoc23_strtoul. This glibc is older, so the kernel names them itself:
    # without compat/glibc_compat.cpp's definitions the library would need a glibc that has them
    # (here: none, and the load check fails on the undefined symbol).
    prelude = "".join(
        f'extern "C" {kind} __isoc23_{name}(const char*, char**, int);\n'
        f"{kind} relu_parse_{name}(const char* text) "
        f"{{ return __isoc23_{name}(text, nullptr, 0); }}\n"
        for kind, name in (("long", "strtol"), ("unsigned long", "strtoul"),
                           ("long long", "strtoll"), ("unsigned long long", "strtoull")))
    kernel_dir = relu_cpu_calling(tmp_path, prelude)
    _library, undefined = build_and_list_undefined(kernel_builder, kernel_dir)
    assert "__isoc23" not in undefined, undefined
    for name in ("strtol", "strtoul", "strtoll", "strtoull"):
        assert re.search(rf"^\s+U {name}(@|$)", undefined, re.M), f"{name} not called: {undefined}"


def test_glibc_pin_table_is_up_to_date():
    # The table is generated from the host glibc; compare only on the glibc it was made from.
    header = (COMPAT / "glibc_pins.h").read_text()
    made_from = re.search(r"from glibc (\S+);", header).group(1)
    host = subprocess.run(["ldd", "--version"], capture_output=True, text=True).stdout
    if not host.splitlines() or not host.splitlines()[0].endswith(" " + made_from):
        pytest.skip(f"the pin table was generated from glibc {made_from}")
    result = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "generate_glibc_pins.py"),
                             "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert 'KERNELHUB_GLIBC_PIN(pow, "2.2.5", "2.17")' in header
    assert "totalorder" not in header
