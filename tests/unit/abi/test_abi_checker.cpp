// SPDX-License-Identifier: Apache-2.0
// The issue's acceptance cases on libraries compiled at test time.
#include <kernelhub/abi/abi_checker.hpp>

#include <fstream>

#include <gtest/gtest.h>

#include "abi_test_support.hpp"

namespace kernelhub::abi {
namespace {

using testing::compile_library;
using testing::macho_dylib;

std::vector<Violation> check(const std::string& path, CheckOptions options = {}) {
  auto checker = AbiChecker::create(**embedded_abi_data(), options);
  EXPECT_TRUE(checker) << checker.error().message;
  ViolationCollector sink;
  checker->check_file(path, sink);
  return sink.sorted();
}

TEST(AbiChecker, PthreadCreateFailsManylinux228) {
  ASSERT_TRUE(compile_library("libthreads.so", R"(
#include <pthread.h>
static void* run(void* arg) { return arg; }
int start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }
)"));
  auto found = check("libthreads.so");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, Rule::manylinux);
  EXPECT_EQ(found[0].symbol, "pthread_create");
  EXPECT_EQ(found[0].version, "GLIBC_2.34");
  auto text = util::render(to_diagnostic(found[0]));
  EXPECT_NE(text.find("pthread_create"), std::string::npos);
  EXPECT_NE(text.find("GLIBC_2.34"), std::string::npos);
  // The newest policy has it.
  CheckOptions newer;
  newer.manylinux = "manylinux_2_34";
  EXPECT_TRUE(check("libthreads.so", newer).empty());
}

TEST(AbiChecker, NonStablePythonSymbolFailsAbi3) {
  ASSERT_TRUE(compile_library("libpy.so", R"(
extern void* _PyObject_GetDictPtr(void*);
void* f(void* o) { return _PyObject_GetDictPtr(o); }
)"));
  auto found = check("libpy.so");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, Rule::python_abi);
  EXPECT_EQ(found[0].symbol, "_PyObject_GetDictPtr");
}

TEST(AbiChecker, PyObjectNewIsInTheStableAbi) {
  // CPython's stable_abi.toml lists _PyObject_New (added 3.2, abi_only): PyObject_New expands
  // to it, so abi3 extensions call it. The reference agrees.
  ASSERT_TRUE(compile_library("libnew.so", R"(
extern void* _PyObject_New(void*);
void* f(void* t) { return _PyObject_New(t); }
)"));
  EXPECT_TRUE(check("libnew.so").empty());
}

TEST(AbiChecker, CleanLibraryPasses) {
  ASSERT_TRUE(compile_library("libclean.so", R"(
#include <string.h>
extern long PyLong_AsLong(void*);
long f(void* o, char* d, const char* s) { strcpy(d, s); return PyLong_AsLong(o); }
)"));
  EXPECT_TRUE(check("libclean.so").empty());
}

TEST(AbiChecker, UnreadableFileIsReportedNotFatal) {
  std::ofstream("script.so") << "#!/bin/sh\n";
  auto found = check("script.so");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, Rule::object_file);
  EXPECT_NE(found[0].message.find("not an ELF or Mach-O file"), std::string::npos);
  auto missing = check("nothing-here.so");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].message.find("cannot open"), std::string::npos);
}

TEST(AbiChecker, MachOLibrariesGetMacosAndPythonRules) {
  std::ofstream("mac.so", std::ios::binary)
      << macho_dylib(26u << 16, true, {"_PyBuffer_Release", "_PyLong_AsLong"});
  auto found = check("mac.so");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].rule, Rule::python_abi);
  EXPECT_EQ(found[0].symbol, "PyBuffer_Release");  // the leading underscore is Mach-O's
  EXPECT_EQ(found[1].rule, Rule::macos);
  CheckOptions newer;
  newer.macos = "26.0";
  newer.python_abi = "3.11";
  EXPECT_TRUE(check("mac.so", newer).empty());
}

TEST(AbiChecker, BadOptionsNameTheOption) {
  const auto& data = **embedded_abi_data();
  CheckOptions options;
  options.python_abi = "three";
  auto checker = AbiChecker::create(data, options);
  ASSERT_FALSE(checker);
  EXPECT_EQ(checker.error().message, "--python-abi: invalid version \"three\"");
  options = {};
  options.manylinux = "manylinux_2_99";
  checker = AbiChecker::create(data, options);
  ASSERT_FALSE(checker);
  EXPECT_TRUE(checker.error().message.starts_with("--manylinux: unknown manylinux policy"));
  options = {};
  options.torch_stable_abi = "x.y";
  EXPECT_FALSE(AbiChecker::create(data, options));
}

TEST(AbiChecker, CheckPathsFindsVariantsAndSortsViolations) {
  std::filesystem::create_directories("kernel/build/torch-cpu/relu");
  std::ofstream("kernel/build/torch-cpu/metadata.json") << "{}";
  ASSERT_TRUE(compile_library("kernel/build/torch-cpu/relu/_b.so", R"(
extern void PyBuffer_Release(void*);
void f(void* b) { PyBuffer_Release(b); }
)"));
  ASSERT_TRUE(compile_library("kernel/build/torch-cpu/relu/_a.so", R"(
extern void* _PyObject_GetDictPtr(void*);
extern void PyBuffer_Release(void*);
void* f(void* o) { PyBuffer_Release(o); return _PyObject_GetDictPtr(o); }
)"));
  auto report = check_paths(**embedded_abi_data(), {}, {"kernel"});
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->libraries.size(), 2u);
  EXPECT_EQ(report->libraries[0], "kernel/build/torch-cpu/relu/_a.so");
  ASSERT_EQ(report->violations.size(), 3u);
  EXPECT_EQ(report->violations[0].symbol, "PyBuffer_Release");
  EXPECT_EQ(report->violations[1].symbol, "_PyObject_GetDictPtr");
  EXPECT_EQ(report->violations[2].library, "kernel/build/torch-cpu/relu/_b.so");

  CheckOptions bad;
  bad.macos = "";
  EXPECT_FALSE(check_paths(**embedded_abi_data(), bad, {"kernel"}));
  EXPECT_FALSE(check_paths(**embedded_abi_data(), {}, {"no-such-dir"}));
}

}  // namespace
}  // namespace kernelhub::abi
