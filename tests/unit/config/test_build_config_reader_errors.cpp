// SPDX-License-Identifier: Apache-2.0
// Invalid build.toml files, one problem each: the exact message, hint and position reported.
#include <gtest/gtest.h>

#include <string>

#include "reader_test_support.hpp"
#include "../test_support.hpp"

namespace kernelhub::config {
namespace {

using testing::k_general5;
using testing::k_torch;
using testing::read_toml;

struct InvalidCase {
  std::string name;
  std::string toml;
  std::uint32_t line;
  std::uint32_t column;
  std::string message;
  std::string hint;
};

std::string g5(std::string_view extra_general_lines = {}) {
  return std::string(k_general5) + std::string(extra_general_lines);
}

// A file with [general] lines 1-6, then `extra` (starting on line 7) and [torch].
std::string with_general(std::string_view extra) { return g5(extra) + std::string(k_torch); }
// [general] and [torch] on lines 1-8, then `rest` from line 9.
std::string with_tail(std::string_view rest) {
  return g5() + std::string(k_torch) + std::string(rest);
}
// The same with a cuda kernel [kernel.relu] on lines 9-12, then `extra` from line 13.
std::string with_kernel(std::string_view extra) {
  return with_tail(
             "[kernel.relu]\nbackend = \"cuda\"\ndepends = [\"torch\"]\nsrc = [\"relu.cu\"]\n") +
         std::string(extra);
}

using kernelhub::testing::replace;

const std::string k_kernel_name_rules =
    "a name is lowercase letters, digits and dashes, starts with a letter, ends with a letter or "
    "digit and has at least two characters (for example \"my-kernel\", \"relu2d\")";

std::vector<InvalidCase> invalid_cases() {
  const auto base = with_general("");
  return {
      // [general]
      {"unknown_general_key", with_general("licence = \"MIT\"\n"), 7, 1,
       "unknown key \"licence\" in [general]", "did you mean \"license\"?"},
      {"unknown_top_level_key", "author = \"me\"\n" + base, 1, 1,
       "unknown top-level key \"author\"", ""},
      {"unknown_top_level_table", with_tail("[tests]\nsrc = []\n"), 9, 1, "unknown table [tests]",
       ""},
      {"misspelt_framework_table", g5() + "[torhc]\nsrc = []\n", 7, 1, "unknown table [torhc]",
       "did you mean \"torch\"?"},
      {"unknown_general_subtable", with_tail("[general.metal]\n"), 9, 1,
       "unknown table [general.metal]", ""},
      {"unknown_backend", replace(base, "[\"cuda\"]", "[\"cudaa\"]"), 6, 13,
       "unknown backend \"cudaa\"", "did you mean \"cuda\"?"},
      {"uppercase_backend", replace(base, "[\"cuda\"]", "[\"cpu\", \"CUDA\"]"), 6, 20,
       "unknown backend \"CUDA\"", "did you mean \"cuda\"?"},
      {"backends_not_array", replace(base, "[\"cuda\"]", "\"cuda\""), 6, 12,
       "expected an array of strings for \"general.backends\", found a string \"cuda\"", ""},
      {"uppercase_name", replace(base, "\"relu\"", "\"Relu\""), 2, 8,
       "invalid kernel name \"Relu\"", "did you mean \"relu\"?"},
      {"underscore_name", replace(base, "\"relu\"", "\"my_relu\""), 2, 8,
       "invalid kernel name \"my_relu\"", "did you mean \"my-relu\"?"},
      {"one_letter_name", replace(base, "\"relu\"", "\"r\""), 2, 8, "invalid kernel name \"r\"",
       k_kernel_name_rules},
      {"negative_version", replace(base, "version = 1", "version = -1"), 3, 11,
       "expected a non-negative integer for \"general.version\", found an integer -1", ""},
      {"string_version", replace(base, "version = 1", "version = \"1\""), 3, 11,
       "expected a non-negative integer for \"general.version\", found a string \"1\"", ""},
      {"missing_license", replace(base, "license = \"Apache-2.0\"\n", ""), 1, 1,
       "missing required key \"license\" in [general]", ""},
      {"misspelt_required_key", replace(base, "license =", "licnese ="), 5, 1,
       "unknown key \"licnese\" in [general]", "did you mean \"license\"?"},
      {"missing_general", std::string(k_torch), 1, 1, "missing table [general]", ""},
      {"invalid_upstream", with_general("upstream = \"not a url\"\n"), 7, 12,
       "invalid git URL \"not a url\"", "use an https://, ssh:// or git@host:path URL"},
      {"hub_unknown_key", with_tail("[general.hub]\nrepo = \"a/b\"\n"), 10, 1,
       "unknown key \"repo\" in [general.hub]", ""},
      // Editions
      {"unsupported_edition", replace(base, "edition = 5", "edition = 4"), 4, 11,
       "unsupported build.toml edition 4",
       "this kernel-builder reads edition 5 (and the legacy formats, which have no `edition` "
       "key); a newer edition needs a newer kernel-builder"},
      {"string_edition", replace(base, "edition = 5", "edition = \"5\""), 4, 11,
       "expected a non-negative integer for \"general.edition\", found a string \"5\"",
       "write edition = 5"},
      {"kernel_depends_without_edition",
       replace(with_general("kernel-depends = []\n"), "edition = 5\n", ""), 6, 1,
       "\"kernel-depends\" needs edition 5",
       "a file without an `edition` key is read as edition 4 or older: add `edition = 5` to "
       "[general]"},
      // Versions
      {"one_part_cuda_minver", with_tail("[general.cuda]\nminver = \"12\"\n"), 10, 10,
       "version \"12\" for \"general.cuda.minver\" has 1 part, expected 2 (major.minor)",
       "write \"12.0\""},
      {"three_part_torch_minver", with_tail("minver = \"2.9.1\"\n"), 9, 10,
       "version \"2.9.1\" for \"torch.minver\" has 3 parts, expected 2 (major.minor)",
       "write \"2.9\""},
      {"non_numeric_version", with_tail("maxver = \"two\"\n"), 9, 10,
       "invalid version \"two\" for \"torch.maxver\": each part must be a number", ""},
      {"empty_version", with_tail("maxver = \"\"\n"), 9, 10, "empty version for \"torch.maxver\"",
       "write a \"major.minor\" version such as \"2.9\""},
      {"stable_abi_integer", with_tail("stable-abi = 2\n"), 9, 14,
       "expected a version or a per-backend table for \"torch.stable-abi\", found an integer 2",
       "write stable-abi = \"2.11\""},
      {"stable_abi_unknown_backend", with_tail("[torch.stable-abi]\ncudaa = \"2.11\"\n"), 10, 1,
       "unknown backend \"cudaa\" in [torch.stable-abi]", "did you mean \"cuda\"?"},
      // python-depends
      {"python_depends_typo", with_general("python-depends = [\"einopz\"]\n"), 7, 19,
       "unknown python dependency \"einopz\"", "did you mean \"einops\"?"},
      {"python_depends_wrong_scope", with_tail("[general.cuda]\npython-depends = [\"einops\"]\n"),
       10, 19, "unknown python dependency \"einops\" for backend \"cuda\"",
       "\"einops\" is allowed in [general]: list it there"},
      {"python_depends_backend_name_in_general", with_general("python-depends = [\"nki\"]\n"), 7,
       19, "unknown python dependency \"nki\"",
       "\"nki\" is allowed in [general.neuron]: list it there"},
      {"python_depends_tpu", with_tail("[general.tpu]\npython-depends = [\"jax\"]\n"), 10, 19,
       "no python dependencies are defined for backend \"tpu\"", "remove this python-depends list"},
      {"python_depends_far_off", with_general("python-depends = [\"numpy\"]\n"), 7, 19,
       "unknown python dependency \"numpy\"", "allowed here: einops, helion, tvm-ffi"},
      // kernel-depends
      {"kernel_depends_both",
       with_general("kernel-depends = [{ repo-id = \"a/b\", version = 1, revision = \"x\" }]\n"), 7,
       19, "kernel dependency \"a/b\" sets both \"version\" and \"revision\"",
       "keep one: \"version\" follows a major version, \"revision\" pins a git revision"},
      {"kernel_depends_neither", with_general("kernel-depends = [{ repo-id = \"a/b\" }]\n"), 7, 19,
       "kernel dependency \"a/b\" needs a \"version\" or a \"revision\"",
       "add version = <major version> or revision = \"<git revision>\""},
      {"kernel_depends_unknown_field",
       with_general("kernel-depends = [{ repo-id = \"a/b\", version = 1, tag = \"x\" }]\n"), 7, 51,
       "unknown key \"tag\" in \"general.kernel-depends[0]\"", ""},
      {"kernel_depends_missing_repo", with_general("kernel-depends = [{ version = 1 }]\n"), 7, 19,
       "missing required key \"repo-id\" in \"general.kernel-depends[0]\"", ""},
      // Frameworks
      {"two_frameworks", with_tail("[tvm-ffi]\nsrc = []\n"), 9, 1,
       "only one framework table is allowed, found [torch] and [tvm-ffi]",
       "keep one of [torch], [torch-noarch] or [tvm-ffi]"},
      {"no_framework", g5(), 1, 1, "missing framework table",
       "add one of [torch], [torch-noarch] or [tvm-ffi]"},
      {"torch_unknown_key", with_tail("srcs = []\n"), 9, 1, "unknown key \"srcs\" in [torch]",
       "did you mean \"src\"?"},
      {"torch_src_not_array", replace(with_general(""), "src = [\"a.cpp\"]", "src = \"a.cpp\""), 8,
       7, "expected an array of strings for \"torch.src\", found a string \"a.cpp\"", ""},
      {"torch_src_element_not_string",
       replace(with_general(""), "src = [\"a.cpp\"]", "src = [\"a.cpp\", 1]"), 8, 17,
       "expected a string for \"torch.src[1]\", found an integer 1", ""},
      {"noarch_unknown_key", g5() + "[torch-noarch]\nsrc = []\n", 8, 1,
       "unknown key \"src\" in [torch-noarch]", ""},
      {"noarch_both_spellings",
       g5() + "[torch-noarch]\ncuda_capabilities = [\"8.0\"]\ncuda-capabilities = [\"9.0\"]\n", 9,
       21, "\"cuda-capabilities\" and \"cuda_capabilities\" are the same key in [torch-noarch]",
       "keep one of them"},
      {"tvm_ffi_without_src", g5() + "[tvm-ffi]\ninclude = []\n", 7, 1,
       "missing required key \"src\" in [tvm-ffi]", ""},
      // Kernels
      {"kernel_unknown_backend",
       replace(with_kernel(""), "\"cuda\"\ndepends", "\"cudaa\"\ndepends"), 10, 11,
       "unknown kernel backend \"cudaa\"", "did you mean \"cuda\"?"},
      {"kernel_noarch_backend", replace(with_kernel(""), "\"cuda\"\ndepends", "\"tpu\"\ndepends"),
       10, 11, "backend \"tpu\" has no native kernels",
       "tpu kernels are Python only: remove [kernel.relu] and use [torch-noarch]"},
      {"kernel_key_of_other_backend", with_kernel("rocm-archs = [\"gfx942\"]\n"), 13, 1,
       "key \"rocm-archs\" is for rocm kernels, but [kernel.relu] has backend \"cuda\"",
       "remove it, or move it to a kernel with backend = \"rocm\""},
      {"kernel_missing_src", replace(with_kernel(""), "src = [\"relu.cu\"]\n", ""), 9, 1,
       "missing required key \"src\" in [kernel.relu]", ""},
      {"kernel_unknown_dependency", replace(with_kernel(""), "[\"torch\"]", "[\"cutlass_3_7\"]"),
       11, 12, "unknown dependency \"cutlass_3_7\"", "did you mean \"cutlass_3_5\"?"},
      {"kernel_dependency_wrong_case", replace(with_kernel(""), "[\"torch\"]", "[\"Torch\"]"), 11,
       12, "unknown dependency \"Torch\"", "did you mean \"torch\"?"},
      {"kernel_not_a_table", with_tail("[kernel]\nrelu = 1\n"), 10, 8,
       "expected a table for \"kernel.relu\", found an integer 1",
       "write the kernel as a [kernel.relu] table"},
      {"kernel_cuda_minver_three_parts", with_kernel("cuda-minver = \"12.8.1\"\n"), 13, 15,
       "version \"12.8.1\" for \"kernel.relu.cuda-minver\" has 3 parts, expected 2 (major.minor)",
       "write \"12.8\""},
      // Legacy editions
      {"v2_unknown_python_dependency",
       "[general]\nname = \"relu\"\nuniversal = true\npython-depends = [\"einopz\"]\n[torch]\n", 4,
       19, "unknown python dependency \"einopz\"", "did you mean \"einops\"?"},
      {"v1_unknown_language",
       "[general]\nname = \"relu\"\n[torch]\nsrc = []\n[kernel.relu]\nlanguage = \"fortran\"\n"
       "depends = []\nsrc = []\n",
       6, 12, "unknown kernel language \"fortran\"", "expected one of: cuda, cuda-hipify, metal"},
  };
}

class InvalidBuildToml : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidBuildToml, ReportsExactlyOneLocatedError) {
  const auto& c = GetParam();
  const auto outcome = read_toml(c.toml);
  EXPECT_FALSE(outcome.loaded.has_value());
  const auto errors = outcome.errors();
  ASSERT_EQ(errors.size(), 1u) << c.toml << "\nfirst: "
                               << (errors.empty() ? "" : util::render(errors.front()))
                               << (errors.size() > 1 ? util::render(errors[1]) : "");
  const auto& error = errors.front();
  EXPECT_EQ(error.message, c.message);
  EXPECT_EQ(error.hint, c.hint);
  EXPECT_EQ(error.location.file, "build.toml");
  EXPECT_EQ(error.location.line, c.line) << util::render(error);
  EXPECT_EQ(error.location.column, c.column) << util::render(error);
  EXPECT_EQ(error.source_line, util::line_of(c.toml, c.line));
}

INSTANTIATE_TEST_SUITE_P(Config, InvalidBuildToml, ::testing::ValuesIn(invalid_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(InvalidBuildTomlSyntax, ReportsTheParserErrorAtItsPosition) {
  const auto outcome = read_toml("[general\nname = \"relu\"\n");
  const auto errors = outcome.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "invalid TOML: Error while parsing table header: expected ']', saw '\\n'");
  EXPECT_EQ(errors[0].location.line, 1u);
  EXPECT_EQ(errors[0].location.column, 9u);
}

TEST(InvalidBuildTomlSyntax, ReportsDuplicateKeys) {
  const auto outcome = read_toml(g5("name = \"again\"\n") + std::string(k_torch));
  const auto errors = outcome.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].location.line, 7u);
  EXPECT_EQ(errors[0].message.rfind("invalid TOML: ", 0), 0u) << errors[0].message;
}

TEST(InvalidBuildToml, ReportsEveryProblemInOneRun) {
  const std::string text =
      "[general]\n"
      "name = \"Relu\"\n"  // 2: invalid name
      "version = 1\n"
      "edition = 5\n"
      "licence = \"MIT\"\n"       // 5: misspelt key (license is not missing too)
      "backends = [\"cudaa\"]\n"  // 6: unknown backend
      "[torch]\n"
      "src = [\"a.cpp\"]\n"
      "minver = \"2\"\n"  // 9: one-part version
      "[kernel.relu]\n"
      "backend = \"cuda\"\n"
      "depends = [\"torchh\"]\n"  // 12: unknown dependency
      "src = []\n"
      "hip-flags = []\n";  // 14: rocm key on a cuda kernel
  const auto outcome = read_toml(text);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> positions;
  for (const auto& error : outcome.errors()) {
    positions.emplace_back(error.location.line, error.location.column);
  }
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected = {
      {2, 8}, {5, 1}, {6, 13}, {9, 10}, {12, 12}, {14, 1}};
  EXPECT_EQ(positions, expected);
}

TEST(InvalidBuildToml, NeverThrowsOnOddInput) {
  for (const std::string text :
       {std::string("\xff\xfe"), std::string("[[kernel]]\n"), std::string("general = []\n"),
        std::string("kernel = 1\n"), std::string("[general]\nedition = 99999999999\n"),
        std::string("[general.edition]\n"), std::string(1, '\0')}) {
    EXPECT_NO_THROW({
      const auto outcome = read_toml(text);
      EXPECT_FALSE(outcome.loaded.has_value()) << text;
      EXPECT_FALSE(outcome.errors().empty()) << text;
    });
  }
}

}  // namespace
}  // namespace kernelhub::config
