# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder check-abi` against the reference `kernel-abi-check` (the PyPI package).

The corpus: torch's own shared libraries, small libraries compiled here that each break one
rule, and Mach-O files assembled here. The verdicts must match the reference's, except for
the documented deliberate improvements:
  - dependencies (DT_NEEDED) are checked; the reference records the whitelist but never
    enforces it;
  - odd version tokens (GLIBC_PRIVATE, CXXABI_TM_1) are judged by the policy; the reference
    fails the whole check on them;
  - the dynamic symbol table is read; the reference reads .symtab, so it passes any stripped
    library whatever it needs.
Variants our builder produces are compared in test_check_abi_built_variants.py; here a
variant directory is also laid out by hand to test discovery.
"""
import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import run

kernel_abi_check = pytest.importorskip("kernel_abi_check")
torch = pytest.importorskip("torch")

TORCH_LIB = Path(torch.__file__).parent / "lib"
TORCH_LIBRARIES = sorted(p for p in TORCH_LIB.glob("*.so*") if p.is_file())
# The manylinux policies the reference 0.14.1 knows (it lacks 2_26 and 2_40 and up).
REFERENCE_POLICIES = ["manylinux_2_5", "manylinux_2_17", "manylinux_2_24", "manylinux_2_28",
                      "manylinux_2_34"]
# The rules the reference checks; "dependency" and "torch-stable-abi" are ours alone here.
SHARED_RULES = {"manylinux", "python-abi", "macos"}

THREADS = """
#include <pthread.h>
static void* run(void* arg) { return arg; }
int start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }
"""

# name -> (source, compiler, extra flags, the rule it breaks under the defaults or None)
SNIPPETS = {
    "libclean.so": ("#include <string.h>\nextern long PyLong_AsLong(void*);\n"
                    "long f(void* o, char* d) { strcpy(d, \"x\"); return PyLong_AsLong(o); }\n",
                    "cc", [], None),
    "libthreads.so": (THREADS, "cc", [], "manylinux"),
    "libexp.so": ("#include <math.h>\ndouble f(double x) { return exp(x); }\n", "cc", ["-lm"],
                  "manylinux"),
    "libtochars.so": ("#include <charconv>\nint f(char* b, double d) {\n"
                      "  return static_cast<int>(std::to_chars(b, b + 64, d).ptr - b); }\n",
                      "c++", ["-std=c++17"], "manylinux"),
    "libpybuffer.so": ("extern void PyBuffer_Release(void*);\nvoid f(void* b) { PyBuffer_Release(b); }\n",
                       "cc", [], "python-abi"),
    "libdictptr.so": ("extern void* _PyObject_GetDictPtr(void*);\n"
                      "void* f(void* o) { return _PyObject_GetDictPtr(o); }\n", "cc", [],
                      "python-abi"),
    "libpyobjectnew.so": ("extern void* _PyObject_New(void*);\n"
                          "void* f(void* t) { return _PyObject_New(t); }\n", "cc", [], None),
}


def compile_library(directory: Path, name: str, source: str, compiler: str, flags) -> Path:
    suffix = ".cc" if compiler == "c++" else ".c"
    source_path = directory / (name + suffix)
    source_path.write_text(source)
    output = directory / name
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(output), str(source_path), *flags],
                   check=True, capture_output=True)
    return output


def macho(minos, build_version=True, undefined=()):
    """A 64-bit little-endian Mach-O dylib: LC_BUILD_VERSION (macOS) and an LC_SYMTAB."""
    strings = b"\0"
    offsets = []
    for name in undefined:
        offsets.append(len(strings))
        strings += name.encode() + b"\0"
    commands = (24 if build_version else 0) + 24
    symbols = 32 + commands
    string_table = symbols + 16 * len(undefined)
    out = struct.pack("<8I", 0xFEEDFACF, 0x01000007, 3, 6, 2 if build_version else 1, commands,
                      0, 0)
    if build_version:
        out += struct.pack("<6I", 0x32, 24, 1, minos, minos, 0)
    out += struct.pack("<6I", 0x2, 24, symbols, len(undefined), string_table, len(strings))
    for offset in offsets:
        out += struct.pack("<IBBHQ", offset, 0x01, 0, 0x0100, 0)
    return out + strings


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if shutil.which("cc") is None or shutil.which("c++") is None:
        pytest.skip("no C/C++ compiler to build the test libraries")
    directory = tmp_path_factory.mktemp("abi-corpus")
    built = {}
    for name, (source, compiler, flags, _) in SNIPPETS.items():
        built[name] = compile_library(directory, name, source, compiler, flags)
    for name, data in {
        "mac15.so": macho(15 << 16, undefined=["_PyBuffer_Release", "_PyLong_AsLong"]),
        "mac26.so": macho(26 << 16),
        "mac14.so": macho((14 << 16) | (2 << 8) | 1),
        "macnone.so": macho(0, build_version=False),
    }.items():
        (directory / name).write_bytes(data)
        built[name] = directory / name
    return built


def ours(kernel_builder, paths, *flags):
    result = run([kernel_builder, "check-abi", "--json", *flags, *paths])
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert (result.returncode == 0) == report["ok"]
    return report


def our_findings(report, library, rules=SHARED_RULES):
    """{(rule, symbol, version)} for one library; versions as the reference spells them."""
    found = set()
    for v in report["violations"]:
        if v["library"] != str(library) or v["rule"] not in rules:
            continue
        version = v["version"]
        if v["rule"] == "python-abi":
            version = ""  # the reference's and our stable-ABI lists differ in age
        found.add((v["rule"], v["symbol"], version))
    return found


def reference_findings(obj, manylinux="manylinux_2_28", python_abi="3.9", macos="15.0"):
    found = set()
    for v in obj.check_manylinux(manylinux):
        found.add(("manylinux", v.name, f"{v.dep}_{v.version}"))
    for v in obj.check_python_abi(python_abi):
        found.add(("python-abi", v.name, ""))
    for v in obj.check_macos(macos):
        version = getattr(v, "version", "")
        found.add(("macos", "", version))
    return found


def normalise_macos(findings):
    # The reference prints "26" where we print "26.0"; compare the versions as numbers.
    out = set()
    for rule, symbol, version in findings:
        if rule == "macos" and version:
            version = tuple(int(x) for x in version.split(".")) + (0,) * (3 - version.count(".") - 1)
        out.add((rule, symbol, version))
    return out


def test_corpus_matches_reference(kernel_builder, corpus):
    report = ours(kernel_builder, [str(p) for p in corpus.values()])
    for name, path in corpus.items():
        expected = normalise_macos(reference_findings(kernel_abi_check.ObjectFile(str(path))))
        actual = normalise_macos(our_findings(report, path))
        assert actual == expected, name
        broken = SNIPPETS[name][3] if name in SNIPPETS else None
        if broken is not None:
            assert {rule for rule, _, _ in actual} == {broken}, name


def test_each_snippet_breaks_only_its_rule(kernel_builder, corpus):
    report = ours(kernel_builder, [str(corpus[name]) for name in SNIPPETS])
    for name, (_, _, _, broken) in SNIPPETS.items():
        rules = {v["rule"] for v in report["violations"] if v["library"] == str(corpus[name])}
        assert rules == ({broken} if broken else set()), name


def has_symtab(path: Path) -> bool:
    from elftools.elf.elffile import ELFFile  # pyelftools comes with auditwheel

    with path.open("rb") as handle:
        return ELFFile(handle).get_section_by_name(".symtab") is not None


_REFERENCE_OBJECTS = {}


def reference_object(path: Path):
    # Opening libtorch_cuda.so takes the reference about a second: once per run is enough.
    if path not in _REFERENCE_OBJECTS:
        _REFERENCE_OBJECTS[path] = kernel_abi_check.ObjectFile(str(path))
    return _REFERENCE_OBJECTS[path]


@pytest.mark.parametrize("policy", REFERENCE_POLICIES)
def test_torch_libraries_match_reference(kernel_builder, policy):
    if not TORCH_LIBRARIES:
        pytest.skip("torch ships no shared libraries here")
    report = ours(kernel_builder, [str(p) for p in TORCH_LIBRARIES], "--manylinux", policy)
    assert report["libraries"] == [str(p) for p in TORCH_LIBRARIES]
    compared = 0
    for library in TORCH_LIBRARIES:
        expected = reference_findings(reference_object(library), manylinux=policy)
        if not has_symtab(library):
            # Stripped (torch's vendored libgfortran): the reference sees no symbols at all.
            assert expected == set(), library.name
            continue
        assert our_findings(report, library) == expected, library.name
        compared += 1
    assert compared >= len(TORCH_LIBRARIES) // 2


def test_python_abi_versions_match_reference_on_torch_python(kernel_builder):
    library = TORCH_LIB / "libtorch_python.so"
    if not library.exists():
        pytest.skip("no libtorch_python.so")
    reference = reference_object(library)
    for python_abi in ["3.9", "3.10", "3.12"]:
        report = ours(kernel_builder, [str(library)], "--python-abi", python_abi)
        expected = {("python-abi", v.name, "") for v in reference.check_python_abi(python_abi)}
        assert our_findings(report, library, {"python-abi"}) == expected, python_abi


def test_acceptance_pthread_create_names_symbol_and_version(kernel_builder, corpus):
    result = run([kernel_builder, "check-abi", corpus["libthreads.so"]])
    assert result.returncode == 1
    assert "pthread_create" in result.stdout and "GLIBC_2.34" in result.stdout
    assert "manylinux_2_28" in result.stdout


def test_acceptance_abi3_and_clean(kernel_builder, corpus):
    result = run([kernel_builder, "check-abi", corpus["libdictptr.so"]])
    assert result.returncode == 1
    assert "_PyObject_GetDictPtr" in result.stdout
    clean = run([kernel_builder, "check-abi", corpus["libclean.so"]])
    assert clean.returncode == 0, clean.stdout
    assert "no ABI violations" in clean.stdout
    # _PyObject_New is in CPython's stable ABI (added 3.2, abi_only); both tools pass it.
    assert run([kernel_builder, "check-abi", corpus["libpyobjectnew.so"]]).returncode == 0
    ref = kernel_abi_check.ObjectFile(str(corpus["libpyobjectnew.so"])).check_python_abi("3.9")
    assert ref == []


# --- the documented deliberate improvements --------------------------------------------------


@pytest.fixture(scope="module")
def fake_versions(tmp_path_factory, corpus):
    """A library needing symbols versioned GLIBC_PRIVATE and CXXABI_TM_1 from a stand-in
    library; its soname is one torch provides, so only the version rule is in play."""
    directory = tmp_path_factory.mktemp("abi-fake")
    (directory / "fake.map").write_text(
        "GLIBC_PRIVATE { global: fake_private; local: *; };\nCXXABI_TM_1 { global: fake_tm; };\n")
    compile_library(directory, "libc10.so", "int fake_private(void) { return 1; }\n"
                    "int fake_tm(void) { return 2; }\n", "cc",
                    [f"-Wl,--version-script={directory / 'fake.map'}", "-Wl,-soname,libc10.so"])
    private = compile_library(directory, "libprivate.so",
                              "extern int fake_private(void);\nint g(void) { return fake_private(); }\n",
                              "cc", [f"-L{directory}", "-lc10"])
    tm = compile_library(directory, "libtm.so",
                         "extern int fake_tm(void);\nint g(void) { return fake_tm(); }\n",
                         "cc", [f"-L{directory}", "-lc10"])
    return private, tm


def test_odd_version_tokens_are_judged_not_fatal(kernel_builder, fake_versions):
    private, tm = fake_versions
    for library in (private, tm):
        with pytest.raises(ValueError):
            kernel_abi_check.ObjectFile(str(library)).check_manylinux("manylinux_2_28")
    report = ours(kernel_builder, [str(private), str(tm)])
    assert our_findings(report, private) == {("manylinux", "fake_private", "GLIBC_PRIVATE")}
    assert our_findings(report, tm) == set()  # CXXABI_TM_1 is in manylinux_2_28's list


def test_stripped_library_is_still_checked(kernel_builder, corpus, tmp_path):
    if shutil.which("strip") is None:
        pytest.skip("strip is not installed")
    stripped = tmp_path / "libthreads_stripped.so"
    shutil.copy(corpus["libthreads.so"], stripped)
    subprocess.run(["strip", str(stripped)], check=True)
    assert kernel_abi_check.ObjectFile(str(stripped)).check_manylinux("manylinux_2_28") == []
    report = ours(kernel_builder, [str(stripped)])
    assert our_findings(report, stripped) == {("manylinux", "pthread_create", "GLIBC_2.34")}


def test_dependencies_are_enforced(kernel_builder, corpus, tmp_path):
    compile_library(tmp_path, "libhelper.so", "int helper(void) { return 1; }\n", "cc",
                    ["-Wl,-soname,libhelper.so.1"])
    user = compile_library(tmp_path, "libuser.so",
                           "extern int helper(void);\nint g(void) { return helper(); }\n", "cc",
                           [f"-L{tmp_path}", "-lhelper"])
    assert reference_findings(kernel_abi_check.ObjectFile(str(user))) == set()
    report = ours(kernel_builder, [str(user)])
    assert [(v["rule"], v["symbol"]) for v in report["violations"]] == [
        ("dependency", "libhelper.so.1")]


def test_strict_policy_forbids_dynamic_libstdcxx(kernel_builder, tmp_path):
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler")
    library = compile_library(tmp_path, "libcxx.so",
                              "#include <string>\nstd::string f(const char* s) { return s; }\n",
                              "c++", [])
    assert ours(kernel_builder, [str(library)])["ok"]
    assert ours(kernel_builder, [str(library)], "--manylinux", "current")["ok"]
    strict = ours(kernel_builder, [str(library)], "--manylinux", "strict")
    assert [(v["rule"], v["symbol"]) for v in strict["violations"]] == [
        ("dependency", "libstdc++.so.6")]


def test_torch_stable_abi(kernel_builder, tmp_path):
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler")
    library = compile_library(tmp_path, "libtorchuser.so", """
namespace c10 { void unstable(); }
namespace torch::stable { void fine(); }
extern "C" int aoti_torch_cpu__grouped_mm(void*);
extern "C" int torch_call_dispatcher(const char*, const char*, void*, unsigned long);
int g() { c10::unstable(); torch::stable::fine(); torch_call_dispatcher(0, 0, 0, 0);
          return aoti_torch_cpu__grouped_mm(0); }
""", "c++", [])
    assert ours(kernel_builder, [str(library)])["ok"], "the torch rule is off by default"
    report = ours(kernel_builder, [str(library)], "--torch-stable-abi", "2.10")
    found = {(v["symbol"], v["demangled"], v["version"]) for v in report["violations"]}
    assert found == {("_ZN3c108unstableEv", "c10::unstable()", ""),
                     ("aoti_torch_cpu__grouped_mm", "", "2.12")}
    later = ours(kernel_builder, [str(library)], "--torch-stable-abi", "2.12")
    assert [v["symbol"] for v in later["violations"]] == ["_ZN3c108unstableEv"]


def test_a_rules_hint_is_printed_once(kernel_builder, tmp_path):
    """issue 13 item 10: a library using 40 unstable torch symbols gets the stable-ABI rule's
    hint once, not once per symbol."""
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler")
    functions = "\n".join(f"void unstable{i}();" for i in range(40))
    calls = " ".join(f"c10::unstable{i}();" for i in range(40))
    library = compile_library(tmp_path, "libmanyunstable.so",
                              f"namespace c10 {{ {functions} }}\nvoid g() {{ {calls} }}\n",
                              "c++", [])
    result = run([kernel_builder, "check-abi", library, "--torch-stable-abi", "2.11"])
    assert result.returncode == 1
    assert result.stdout.count(": error: ") == 40
    hints = [line for line in result.stdout.splitlines() if line.strip().startswith("hint:")]
    assert len(hints) == len(set(hints)) >= 1, hints


def test_kernel_directory_variants(kernel_builder, corpus, tmp_path):
    kernel = tmp_path / "kernel"
    for variant, library in [("torch-cpu", "libclean.so"), ("torch-cuda", "libthreads.so")]:
        package = kernel / "build" / variant / "relu"
        package.mkdir(parents=True)
        (kernel / "build" / variant / "metadata.json").write_text("{}")
        shutil.copy(corpus[library], package / "_relu.abi3.so")
        (package / "__init__.py").write_text("")
    report = ours(kernel_builder, [str(kernel)])
    cpu = kernel / "build" / "torch-cpu" / "relu" / "_relu.abi3.so"
    cuda = kernel / "build" / "torch-cuda" / "relu" / "_relu.abi3.so"
    assert report["libraries"] == [str(cpu), str(cuda)]
    assert {v["library"] for v in report["violations"]} == {str(cuda)}
    # Run from inside the kernel directory with no argument: the same libraries.
    result = run([kernel_builder, "check-abi"], cwd=kernel)
    assert result.returncode == 1
    assert result.stdout.startswith("build/torch-cuda/relu/_relu.abi3.so: error: [manylinux]")


def test_errors(kernel_builder, tmp_path, corpus):
    no_variants = run([kernel_builder, "check-abi", tmp_path])
    assert no_variants.returncode == 1
    assert "no build variants found" in no_variants.stderr
    bad_policy = run([kernel_builder, "check-abi", "--manylinux", "manylinux_2_28x",
                      corpus["libclean.so"]])
    assert bad_policy.returncode == 1
    assert 'did you mean "manylinux_2_28"?' in bad_policy.stderr
    help_text = run([kernel_builder, "check-abi", "--help"], check=True).stdout
    for option in ["--manylinux", "--python-abi", "--torch-stable-abi", "--macos", "--json"]:
        assert option in help_text
