// SPDX-License-Identifier: Apache-2.0
// The rules on hand-made inputs, one rule per test group (rules.hpp).
#include <kernelhub/abi/rules.hpp>

#include <gtest/gtest.h>

#include <kernelhub/abi/abi_data.hpp>

#include "abi_test_support.hpp"

namespace kernelhub::abi {
namespace {

using testing::embedded_data;

ResolvedPolicy policy(std::string_view name) {
  return *resolve_policy(name, embedded_data().manylinux, embedded_data().kernel);
}
types::Version v(std::string_view text) { return *types::Version::parse(text); }

ElfFile x86_library() {
  ElfFile file;
  file.machine = 62;
  return file;
}

void add(ElfFile& file, std::string name, std::string version, std::string from = "libc.so.6") {
  file.undefined_symbols.push_back(ElfSymbol{std::move(name), version, from, false});
  if (!version.empty()) {
    file.version_needs.push_back(ElfVersionNeed{std::move(from), std::move(version)});
  }
}

TEST(ManylinuxRule, NamesTheSymbolAndVersion) {
  auto file = x86_library();
  add(file, "pthread_create", "GLIBC_2.34");
  add(file, "memcpy", "GLIBC_2.14");
  add(file, "_ZSt28__throw_bad_array_new_lengthv", "GLIBCXX_3.4.29", "libstdc++.so.6");
  ViolationCollector sink;
  check_manylinux(file, policy("manylinux_2_28"), "lib.so", sink);
  auto found = sink.sorted();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].symbol, "_ZSt28__throw_bad_array_new_lengthv");
  EXPECT_EQ(found[0].version, "GLIBCXX_3.4.29");
  EXPECT_EQ(found[1].symbol, "pthread_create");
  EXPECT_EQ(found[1].version, "GLIBC_2.34");
  EXPECT_EQ(found[1].rule, Rule::manylinux);
  EXPECT_NE(found[1].message.find("\"pthread_create\""), std::string::npos);
  EXPECT_NE(found[1].hint.find("GLIBC up to 2.28"), std::string::npos);
}

TEST(ManylinuxRule, OddTokensAreHandledNotFatal) {
  auto file = x86_library();
  add(file, "__libc_x", "GLIBC_PRIVATE");
  add(file, "__cxa_tm_cleanup", "CXXABI_TM_1", "libstdc++.so.6");
  ViolationCollector sink;
  check_manylinux(file, policy("manylinux_2_28"), "lib.so", sink);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].version, "GLIBC_PRIVATE");
  EXPECT_NE(sink.all()[0].hint.find("not a release version"), std::string::npos);
}

TEST(ManylinuxRule, VersionNeedWithoutSymbol) {
  auto file = x86_library();
  file.version_needs.push_back({"libc.so.6", "GLIBC_ABI_DT_RELR"});
  file.version_needs.push_back({"libc.so.6", "GLIBC_2.17"});
  ViolationCollector sink;
  check_manylinux(file, policy("manylinux_2_28"), "lib.so", sink);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].symbol, "");
  EXPECT_EQ(sink.all()[0].version, "GLIBC_ABI_DT_RELR");
}

TEST(ManylinuxRule, UnconstrainedPrefixesAndUnversionedSymbolsPass) {
  auto file = x86_library();
  add(file, "cudaMalloc", "libcudart.so.12", "libcudart.so.12");
  add(file, "PyLong_AsLong", "");
  ViolationCollector sink;
  check_manylinux(file, policy("manylinux_2_5"), "lib.so", sink);
  EXPECT_TRUE(sink.all().empty());
}

TEST(ManylinuxRule, ArchitectureOutsideThePolicy) {
  auto file = x86_library();
  file.machine = 183;  // aarch64: not in manylinux_2_5
  ViolationCollector sink;
  check_manylinux(file, policy("manylinux_2_5"), "lib.so", sink);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_NE(sink.all()[0].message.find("\"aarch64\""), std::string::npos);
  ViolationCollector linux_sink;
  check_manylinux(file, policy("linux"), "lib.so", linux_sink);
  EXPECT_TRUE(linux_sink.all().empty());
}

TEST(DependencyRule, WhitelistTorchAndLoader) {
  auto file = x86_library();
  file.needed = {"libc.so.6", "libstdc++.so.6", "ld-linux-x86-64.so.2", "libtorch_cpu.so",
                 "libcudart.so.12", "libfoo.so.1"};
  ViolationCollector sink;
  check_dependencies(file, policy("manylinux_2_28"), embedded_data().torch_library_stems, "lib.so",
                     sink);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].symbol, "libfoo.so.1");
  EXPECT_EQ(sink.all()[0].rule, Rule::dependency);
}

TEST(DependencyRule, StrictPolicyForbidsDynamicLibstdcxx) {
  auto file = x86_library();
  file.needed = {"libc.so.6", "libstdc++.so.6"};
  ViolationCollector sink;
  check_dependencies(file, policy("strict"), embedded_data().torch_library_stems, "lib.so", sink);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].symbol, "libstdc++.so.6");
  EXPECT_NE(sink.all()[0].message.find("\"strict\""), std::string::npos);
  ViolationCollector current;
  check_dependencies(file, policy("current"), embedded_data().torch_library_stems, "lib.so",
                     current);
  EXPECT_TRUE(current.all().empty());
}

TEST(PythonAbiRule, SingleCPythonExtensionsAreTold) {
  EXPECT_TRUE(is_single_cpython_extension("_kernelhub.cpython-311-x86_64-linux-gnu.so"));
  EXPECT_TRUE(is_single_cpython_extension("/w/kernelhub/_kernelhub.cpython-313t-x86_64-linux-gnu.so"));
  EXPECT_FALSE(is_single_cpython_extension("_relu_abc.abi3.so"));
  EXPECT_FALSE(is_single_cpython_extension("/w/cpython-311/librelu.so"));
  EXPECT_FALSE(is_single_cpython_extension("x.cpython-.so"));
  EXPECT_FALSE(is_single_cpython_extension("libtorch_cpu.so"));
}

TEST(PythonAbiRule, TooNewAndNonStableSymbols) {
  std::vector<std::string> undefined = {"PyBuffer_Release", "PyLong_AsLong", "_PyObject_New",
                                        "_PyObject_GetDictPtr", "malloc", "Python_thing"};
  ViolationCollector sink;
  check_python_abi(undefined, embedded_data().python_stable_abi, v("3.9"), "lib.so", sink);
  auto found = sink.sorted();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].symbol, "PyBuffer_Release");
  EXPECT_EQ(found[0].version, "3.11");
  EXPECT_EQ(found[1].symbol, "Python_thing");  // starts with "Py", not in the list
  EXPECT_EQ(found[2].symbol, "_PyObject_GetDictPtr");
  EXPECT_NE(found[2].message.find("not part of the Python stable ABI"), std::string::npos);

  ViolationCollector newer;
  check_python_abi({"PyBuffer_Release"}, embedded_data().python_stable_abi, v("3.11"), "lib.so",
                   newer);
  EXPECT_TRUE(newer.all().empty());
}

TEST(TorchStableAbiRule, ShimVersionsAndUnstableCxxSymbols) {
  std::vector<std::string> undefined = {
      "torch_call_dispatcher",         // 2.10
      "aoti_torch_cpu__grouped_mm",    // 2.12
      "aoti_torch_get_data_ptr",       // older than the versioned ABI
      "_ZN3c105ErrorD1Ev",             // c10::Error::~Error()
      "_ZTIN3c105ErrorE",              // typeinfo for c10::Error
      "_ZN5torch6stable6detail1fEv",   // torch::stable: allowed
      "_ZNSt6vectorIiSaIiEE9push_backEv", "malloc"};
  ViolationCollector sink;
  check_torch_stable_abi(undefined, embedded_data().torch_shims, v("2.10"), "lib.so", sink);
  auto found = sink.sorted();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].symbol, "_ZN3c105ErrorD1Ev");
  EXPECT_EQ(found[0].demangled, "c10::Error::~Error()");
  EXPECT_EQ(found[1].symbol, "_ZTIN3c105ErrorE");
  EXPECT_EQ(found[2].symbol, "aoti_torch_cpu__grouped_mm");
  EXPECT_EQ(found[2].version, "2.12");

  ViolationCollector later;
  check_torch_stable_abi({"aoti_torch_cpu__grouped_mm"}, embedded_data().torch_shims, v("2.12"),
                         "lib.so", later);
  EXPECT_TRUE(later.all().empty());
}

TEST(MacosRule, MissingAndTooNew) {
  MachOFile file;
  file.images.push_back(MachOImage{0x01000007, true, MacOSVersion{26u << 16}, {}});
  file.images.push_back(MachOImage{0x0100000c, true, std::nullopt, {}});
  ViolationCollector sink;
  check_macos(file, v("15.0"), "lib.so", sink);
  ASSERT_EQ(sink.all().size(), 2u);
  EXPECT_EQ(sink.all()[0].version, "26.0");
  EXPECT_NE(sink.all()[0].message.find("requires macOS 26.0, newer than the target 15.0"),
            std::string::npos);
  EXPECT_NE(sink.all()[1].message.find("records no minimum macOS version"), std::string::npos);

  MachOFile ok;
  ok.images.push_back(MachOImage{0x01000007, true, MacOSVersion{15u << 16}, {}});
  ViolationCollector clean;
  check_macos(ok, v("15.0"), "lib.so", clean);
  EXPECT_TRUE(clean.all().empty());
}

}  // namespace
}  // namespace kernelhub::abi
