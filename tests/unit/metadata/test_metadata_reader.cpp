// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <kernelhub/metadata/metadata_reader.hpp>

using namespace kernelhub;
using metadata::parse_metadata;
using metadata::read_metadata;
using nlohmann::json;

namespace {

constexpr const char* k_sha_a = "d0610aa58db33b142c86b59598a2a1c730f52996";
constexpr const char* k_sha_b = "D45ADDADB0C380F3D7CC2813310B3BCD75F8AA9A";

json minimal() {
  return {{"name", "relu"},           {"id", "_relu_cuda_7a4e5a7"},
          {"version", 1},             {"license", "apache-2.0"},
          {"python-depends", json::array()}, {"backend", {{"type", "cuda"}}}};
}

// The messages of every diagnostic for `text`, empty when it parses.
std::vector<std::string> problems(const std::string& text) {
  util::DiagnosticCollector sink;
  const auto result = read_metadata(text, "metadata.json", sink);
  EXPECT_EQ(result.has_value(), !sink.has_errors());
  std::vector<std::string> out;
  for (const auto& d : sink.all()) {
    out.push_back(d.message);
  }
  return out;
}

}  // namespace

TEST(MetadataReader, ReadsMinimalWithDefaults) {
  auto m = parse_metadata(minimal().dump());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->name.str(), "relu");
  EXPECT_EQ(m->id, "_relu_cuda_7a4e5a7");
  EXPECT_EQ(m->version, 1u);
  EXPECT_EQ(m->backend.type, types::Backend::cuda);
  EXPECT_FALSE(m->backend.archs);
  EXPECT_TRUE(m->kernel_depends.empty());
  EXPECT_FALSE(m->upstream || m->source || m->digest || m->provenance);
  EXPECT_FALSE(m->is_dirty());
}

TEST(MetadataReader, ReadsEveryField) {
  auto doc = minimal();
  doc["upstream"] = "git@github.com:org/repo.git";
  doc["source"] = "https://github.com/huggingface/kernels";
  doc["python-depends"] = {"einops"};
  doc["kernel-depends"] = {{{"repo-id", "a/b"}, {"version", 2}}, {{"repo-id", "c/d"}, {"revision", "main"}}};
  doc["backend"]["archs"] = {"8.0", "9.0+PTX"};
  doc["digest"] = {{"algorithm", "sha512"}, {"files", {{"a.so", "xx=="}}}};
  doc["provenance"] = {{"kernel-builder", {{"version", "0.17.0"}, {"commit", k_sha_a}, {"dirty", false}}},
                       {"kernel", {{"commit", k_sha_b}, {"dirty", true}}}};
  auto m = parse_metadata(doc.dump());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->upstream->normalized(), "ssh://git@github.com/org/repo.git");
  EXPECT_EQ(m->upstream->original(), "git@github.com:org/repo.git");
  ASSERT_EQ(m->kernel_depends.size(), 2u);
  EXPECT_EQ(m->kernel_depends[0].version, 2u);
  EXPECT_EQ(m->kernel_depends[1].revision, "main");
  EXPECT_EQ(m->backend.archs, (std::vector<std::string>{"8.0", "9.0+PTX"}));
  EXPECT_EQ(m->digest->algorithm, metadata::DigestAlgorithm::sha512);
  EXPECT_EQ(m->digest->files.at("a.so"), "xx==");
  ASSERT_TRUE(m->provenance->kernel);
  EXPECT_EQ(m->provenance->kernel->commit.str(), "d45addadb0c380f3d7cc2813310b3bcd75f8aa9a");
  EXPECT_TRUE(m->is_dirty());
}

TEST(MetadataReader, ReadsTheLegacyShaAlias) {
  auto doc = minimal();
  doc["provenance"] = {{"kernel-builder", {{"version", "0.17.0-dev0"}, {"sha", k_sha_a}, {"dirty", false}}},
                       {"kernel", {{"sha", k_sha_b}, {"dirty", false}}}};
  auto m = parse_metadata(doc.dump());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->provenance->kernel_builder.git->commit.str(), k_sha_a);
  EXPECT_FALSE(m->is_dirty());
}

TEST(MetadataReader, ToleratesUnknownKeysAndNulls) {
  auto doc = minimal();
  doc["future-field"] = {{"nested", {1, 2}}};
  doc["backend"]["future"] = true;
  doc["upstream"] = nullptr;
  doc["digest"] = nullptr;
  doc["provenance"] = {{"kernel-builder", {{"version", "1"}}}, {"kernel", nullptr}, {"x", 1}};
  EXPECT_TRUE(problems(doc.dump()).empty());
  // The one-key enum form serde also reads.
  doc["backend"]["type"] = {{"rocm", nullptr}};
  auto m = parse_metadata(doc.dump());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->backend.type, types::Backend::rocm);
}

TEST(MetadataReader, ReportsEveryProblemWithItsPath) {
  auto doc = minimal();
  doc.erase("id");
  doc["version"] = 1.5;
  doc["name"] = "Relu";
  doc["backend"]["type"] = "cudaa";
  doc["python-depends"] = {"einops", 3};
  doc["digest"] = {{"algorithm", "md5"}, {"files", {{"a/b.py", 1}}}};
  const auto messages = problems(doc.dump());
  ASSERT_EQ(messages.size(), 7u) << testing::PrintToString(messages);
  EXPECT_EQ(messages[0].rfind("name: invalid kernel name \"Relu\"", 0), 0u);
  EXPECT_EQ(messages[1], "missing required key \"id\"");
  EXPECT_EQ(messages[2], "version: expected a non-negative integer, found number 1.5");
  EXPECT_EQ(messages[3], "python-depends[1]: expected a string, found number 3");
  EXPECT_EQ(messages[4], "backend.type: unknown backend \"cudaa\"");
  EXPECT_EQ(messages[5], "digest.algorithm: unknown digest algorithm \"md5\"");
  EXPECT_EQ(messages[6], "digest.files[\"a/b.py\"]: expected a string, found number 1");
}

TEST(MetadataReader, ReportsFilesByQuotedPath) {
  auto doc = minimal();
  doc["digest"] = {{"algorithm", "sha256"}, {"files", {{"a/b.py", 1}}}};
  EXPECT_EQ(problems(doc.dump()),
            std::vector<std::string>{"digest.files[\"a/b.py\"]: expected a string, found number 1"});
}

TEST(MetadataReader, RejectsRepeatedKnownKeysOnly) {
  const std::string base = minimal().dump();
  auto with = [&](std::string_view from, std::string_view to) {
    auto text = base;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_EQ(problems(with("\"name\":\"relu\"", "\"name\":\"relu\",\"name\":\"ab\"")),
            std::vector<std::string>{"duplicate key \"name\""});
  EXPECT_TRUE(problems(with("\"name\":\"relu\"", "\"x\":1,\"x\":2,\"name\":\"relu\"")).empty());
  auto doc = minimal();
  doc["provenance"] = {{"kernel-builder", {{"version", "1"}, {"dirty", true}, {"commit", k_sha_a}}}};
  auto text = doc.dump();
  text.replace(text.find("\"commit\""), 8, "\"sha\":\"" + std::string(k_sha_a) + "\",\"commit\"");
  EXPECT_EQ(problems(text).front(), "provenance.kernel-builder: duplicate key \"commit\"");
}

TEST(MetadataReader, ChecksProvenanceAndDependencies) {
  auto bad_provenance = [&](json provenance) {
    auto doc = minimal();
    doc["provenance"] = std::move(provenance);
    return problems(doc.dump());
  };
  EXPECT_EQ(bad_provenance({{"kernel-builder", {{"version", "1"}, {"commit", k_sha_a}}}}),
            std::vector<std::string>{
                "provenance.kernel-builder: git commit and dirty must be specified together"});
  EXPECT_EQ(bad_provenance({{"kernel-builder", {{"version", "1"}, {"commit", nullptr}, {"dirty", true}}}})
                .front(),
            "provenance.kernel-builder.commit: expected a string, found null");
  EXPECT_EQ(bad_provenance({{"kernel-builder", {{"version", "1"}}}, {"kernel", {{"commit", "abc"}, {"dirty", true}}}})
                .front(),
            "provenance.kernel.commit: invalid git object id \"abc\": expected 40 or 64 hexadecimal digits");
  EXPECT_EQ(bad_provenance(json::object()).front(), "provenance: missing required key \"kernel-builder\"");

  auto bad_dependency = [&](json dependency) {
    auto doc = minimal();
    doc["kernel-depends"] = json::array({std::move(dependency)});
    return problems(doc.dump());
  };
  EXPECT_EQ(bad_dependency({{"repo-id", "a/b"}}).front(),
            "kernel-depends[0]: either \"version\" or \"revision\" must be specified");
  EXPECT_EQ(bad_dependency({{"repo-id", "a/b"}, {"version", 1}, {"revision", "x"}}).front(),
            "kernel-depends[0]: \"version\" and \"revision\" are mutually exclusive");
  EXPECT_EQ(bad_dependency({{"repo-id", "a/b"}, {"version", 1}, {"pin", 1}}).front(),
            "kernel-depends[0]: unknown key \"pin\"");
  auto doc = minimal();
  doc["kernel-depends"] = nullptr;
  EXPECT_EQ(problems(doc.dump()).front(),
            "kernel-depends: expected an array of dependencies, found null");
}

TEST(MetadataReader, ReportsSyntaxErrorsWithLineAndColumn) {
  util::DiagnosticCollector sink;
  EXPECT_FALSE(read_metadata("{\n  \"name\": \"relu\",\n  }", "m.json", sink));
  ASSERT_EQ(sink.all().size(), 1u);
  const auto& d = sink.all()[0];
  EXPECT_EQ(d.location.line, 3u);
  EXPECT_EQ(d.location.column, 3u);
  EXPECT_EQ(d.source_line, "  }");
  EXPECT_EQ(d.message.rfind("invalid JSON: syntax error", 0), 0u) << d.message;
}

TEST(MetadataReader, RejectsWhatSerdeRejects) {
  const auto text = minimal().dump();
  EXPECT_FALSE(parse_metadata("\xEF\xBB\xBF" + text));  // a byte order mark
  EXPECT_FALSE(parse_metadata(text + " x"));
  EXPECT_FALSE(parse_metadata("[]"));
  for (const auto* version : {"-0", "1e2", "1.0", "18446744073709551616", "-1", "\"1\""}) {
    auto changed = text;
    changed.replace(changed.find("\"version\":1"), 11, std::string("\"version\":") + version);
    EXPECT_FALSE(parse_metadata(changed)) << version;
  }
  auto doc = minimal();
  doc["backend"]["type"] = "CUDA";  // serde reads enums case-sensitively
  EXPECT_FALSE(parse_metadata(doc.dump()));
  doc["backend"]["type"] = {{"cuda", 1}};
  EXPECT_FALSE(parse_metadata(doc.dump()));
}

TEST(MetadataReader, JoinsProblemsIntoOneMessage) {
  auto doc = minimal();
  doc.erase("name");
  doc.erase("license");
  auto m = parse_metadata(doc.dump(), "build/metadata.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "build/metadata.json: missing required key \"name\"\n"
            "build/metadata.json: missing required key \"license\"");
}

TEST(MetadataReader, ChecksTextOnlyWhereSerdeReadsIt) {
  const auto text = minimal().dump();
  const auto with_extra = [&](std::string_view extra) {
    return text.substr(0, text.size() - 1) + "," + std::string(extra) + "}";
  };
  // Skipped values may hold lone surrogates and invalid UTF-8; keys and read values may not.
  EXPECT_TRUE(problems(with_extra("\"u\":\"\\ud800\"")).empty());
  EXPECT_TRUE(problems(with_extra("\"u\":{\"k\":[\"\xff\"]}")).empty());
  EXPECT_TRUE(problems(with_extra("\"u\":\"\\ud83d\\ude00\"")).empty());
  EXPECT_EQ(problems(with_extra("\"\\ud800\":1")),
            std::vector<std::string>{"invalid key \"\xEF\xBF\xBD\": invalid UTF-8 or a lone surrogate escape"});
  auto bad_license = text;
  bad_license.replace(bad_license.find("apache-2.0"), 10, "\\udc00");
  EXPECT_EQ(problems(bad_license),
            std::vector<std::string>{"license: invalid string: invalid UTF-8 or a lone surrogate escape"});
  EXPECT_FALSE(parse_metadata(with_extra("\"u\":\"\\uZZZZ\"")));
  EXPECT_FALSE(parse_metadata(with_extra("\"u\":\"\x01\"")));
}

TEST(MetadataReader, ReadsKernelsMinverOfExactlyThreeParts) {
  auto doc = minimal();
  doc["kernels-minver"] = "01.2.0";
  auto m = parse_metadata(doc.dump());
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->kernels_minver);
  EXPECT_EQ(metadata::kernels_minver_text(*m->kernels_minver), "1.2.0");
  doc["kernels-minver"] = nullptr;
  EXPECT_FALSE(parse_metadata(doc.dump())->kernels_minver);
  // The reference rejects the whole file for each of these (issue 21).
  doc["kernels-minver"] = "0.12";
  EXPECT_EQ(problems(doc.dump()),
            std::vector<std::string>{"kernels-minver: \"0.12\" has 2 components, expected 3"});
  doc["kernels-minver"] = "1.2.3.4";
  EXPECT_EQ(problems(doc.dump()).size(), 1u);
  doc["kernels-minver"] = "v1.0.0";
  EXPECT_EQ(problems(doc.dump()).size(), 1u);
  doc["kernels-minver"] = 5;
  EXPECT_EQ(problems(doc.dump()).size(), 1u);
}
