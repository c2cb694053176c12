// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>

using namespace kernelhub;
using namespace kernelhub::metadata;

namespace {

Metadata sample() {
  return Metadata{.name = types::KernelName::parse("relu").value(),
                  .id = "_relu_cuda_7a4e5a7",
                  .version = 2,
                  .kernels_minver = std::nullopt,
                  .license = "apache-2.0",
                  .upstream = std::nullopt,
                  .source = std::nullopt,
                  .python_depends = {},
                  .kernel_depends = {},
                  .backend = {types::Backend::cuda, std::nullopt},
                  .digest = std::nullopt,
                  .provenance = std::nullopt};
}

GitStatus status(char digit, bool dirty) {
  return GitStatus{types::GitOid::parse(std::string(40, digit)).value(), dirty};
}

}  // namespace

TEST(Metadata, WritesMinimalWithKernelDependsAndNoAbsentOptionals) {
  EXPECT_EQ(to_json(sample()),
            "{\n"
            "  \"name\": \"relu\",\n"
            "  \"id\": \"_relu_cuda_7a4e5a7\",\n"
            "  \"version\": 2,\n"
            "  \"license\": \"apache-2.0\",\n"
            "  \"python-depends\": [],\n"
            "  \"kernel-depends\": [],\n"
            "  \"backend\": {\n"
            "    \"type\": \"cuda\"\n"
            "  }\n"
            "}\n");
}

TEST(Metadata, WritesProvenanceFlattenedWithCommitNeverSha) {
  auto m = sample();
  m.provenance = Provenance{{"0.17.0", status('a', false)}, status('b', true)};
  m.upstream = types::GitUrl::parse("git@github.com:org/repo.git").value();
  m.kernel_depends = {{"a/b", 1, std::nullopt}};
  const auto text = to_json(m);
  EXPECT_NE(text.find("\"upstream\": \"git@github.com:org/repo.git\""), std::string::npos);
  EXPECT_NE(text.find("\"kernel-builder\": {\n      \"version\": \"0.17.0\",\n      \"commit\": \""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("\"sha\""), std::string::npos);
  EXPECT_EQ(text.find("revision"), std::string::npos);
  EXPECT_NE(text.find("\"repo-id\": \"a/b\",\n      \"version\": 1"), std::string::npos) << text;
}

TEST(Metadata, RoundTripsThroughTheReader) {
  auto m = sample();
  m.source = types::GitUrl::parse("https://github.com/huggingface/kernels").value();
  m.python_depends = {"einops", "nvidia-cutlass-dsl"};
  m.backend.archs = std::vector<std::string>{"8.0", "9.0+PTX"};
  m.digest = Digest{DigestAlgorithm::sha256, {{"a.so", "x="}, {"b/c.py", "y="}}};
  m.provenance = Provenance{{"0.17.0", std::nullopt}, std::nullopt};
  m.kernel_depends = {{"a/b", std::nullopt, std::string("main")}};
  m.kernels_minver = types::Version({1, 0, 0});
  const auto text = to_json(m);
  // After `version`, always three parts.
  EXPECT_NE(text.find("\"version\": 2,\n  \"kernels-minver\": \"1.0.0\",\n  \"license\""),
            std::string::npos) << text;
  auto back = parse_metadata(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, m);
}

TEST(Metadata, WritesAndReadsTheBuildRecord) {
  // provenance.build (docs/build.md, "Reproducible builds"): after the reference's keys, maps
  // in key order; read back whole, and a malformed one is left out, never an error, since the
  // reference reads past it.
  auto m = sample();
  BuildProvenance build{"https://hub.example/k/relu.git", 1772366400,
                        {{"torch", "2.15.0"}, {"cxx", "GNU 12.2.0"}},
                        {{"build-type", "Release"}, {"cxx", "-O2"}}};
  m.provenance = Provenance{{"0.1.0", std::nullopt}, status('b', true), build};
  const auto text = to_json(m);
  EXPECT_NE(text.find("\"dirty\": true\n    },\n    \"build\": {\n"
                      "      \"origin\": \"https://hub.example/k/relu.git\",\n"
                      "      \"source-date-epoch\": 1772366400,\n"
                      "      \"toolchain\": {\n        \"cxx\": \"GNU 12.2.0\",\n"
                      "        \"torch\": \"2.15.0\"\n      },\n"),
            std::string::npos)
      << text;
  auto back = parse_metadata(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, m);

  auto odd = text;
  odd.replace(odd.find("\"toolchain\": {"), 14, "\"toolchain\": 7, \"x\": {");
  back = parse_metadata(odd);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->provenance && back->provenance->build);
  EXPECT_TRUE(back->provenance->build->toolchain.empty());
  EXPECT_EQ(back->provenance->build->flags, build.flags);
}

TEST(Metadata, IsDirtyWhenEitherSideIsDirty) {
  for (const bool builder_dirty : {false, true}) {
    for (const bool kernel_dirty : {false, true}) {
      auto m = sample();
      m.provenance = Provenance{{"1", status('a', builder_dirty)}, status('b', kernel_dirty)};
      EXPECT_EQ(m.is_dirty(), builder_dirty || kernel_dirty);
    }
  }
  auto m = sample();
  EXPECT_FALSE(m.is_dirty());
  m.provenance = Provenance{{"1", std::nullopt}, std::nullopt};
  EXPECT_FALSE(m.is_dirty());
}

TEST(Metadata, RecordsABuildOutsideTheSandboxAndReadsItBack) {
  auto m = sample();
  m.provenance = Provenance{{"1", std::nullopt}, std::nullopt, std::nullopt, true};
  EXPECT_EQ(to_json(m).find("sandboxed"), std::string::npos) << "only false is written";
  EXPECT_FALSE(m.is_unsandboxed());
  m.provenance->sandboxed = false;
  const auto text = to_json(m);
  EXPECT_NE(text.find("\"version\": \"1\"\n    },\n    \"sandboxed\": false\n  }"),
            std::string::npos)
      << text;
  EXPECT_TRUE(m.is_unsandboxed());
  auto back = parse_metadata(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, m);
  // The reference ignores the key; so does the reader when it is not a boolean.
  auto odd = parse_metadata(
      R"({"name": "relu", "id": "_relu_cpu_abc", "version": 1, "license": "MIT",
          "python-depends": [], "backend": {"type": "cpu"},
          "provenance": {"kernel-builder": {"version": "1"}, "sandboxed": "no"}})");
  ASSERT_TRUE(odd) << odd.error().message;
  EXPECT_FALSE(odd->is_unsandboxed());
}

TEST(Metadata, WritesFilesAtomically) {
  ASSERT_TRUE(write_metadata_file("metadata.json", sample()));
  EXPECT_EQ(util::read_file("metadata.json").value(), to_json(sample()));
  auto back = read_metadata_file("metadata.json");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, sample());
  EXPECT_FALSE(read_metadata_file("missing.json"));
}
