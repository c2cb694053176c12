// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/kernel_upload.hpp>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/hub/content_hash.hpp>

#include "fake_transport.hpp"

#include "../test_support.hpp"

namespace kernelhub::hub {
namespace {

namespace fs = std::filesystem;

using kernelhub::testing::write;

std::vector<std::string> paths_of(const std::vector<LocalFile>& files) {
  std::vector<std::string> paths;
  for (const auto& file : files) {
    paths.push_back(file.path_in_repo);
  }
  return paths;
}

std::vector<RemoteFile> remote(std::initializer_list<const char*> paths) {
  std::vector<RemoteFile> files;
  for (const char* path : paths) {
    files.push_back(RemoteFile{path, "oid", std::nullopt});
  }
  return files;
}

TEST(KernelUpload, VersionBranchFilesSkipBytecodeAndNonBenchmarks) {
  write("build/torch-cpu/metadata.json", "{}");
  write("build/torch-cpu/relu/__init__.py", "");
  write("build/torch-cpu/relu/__pycache__/x.cpython-311.pyc", "");
  write("build/torch-cuda/relu/ops.so", "elf");
  write("benchmarks/benchmark.py", "");
  write("benchmarks/benchmark_big.py", "");
  write("benchmarks/helper.py", "");
  write("benchmarks/sub/benchmark.py", "");
  std::vector<UploadVariant> variants{{"torch-cpu", "build/torch-cpu"}, {"torch-cuda", "build/torch-cuda"}};
  auto files = version_branch_files(variants, fs::path("benchmarks"));
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(paths_of(*files), (std::vector<std::string>{
                                  "benchmarks/benchmark.py", "benchmarks/benchmark_big.py",
                                  "build/torch-cpu/metadata.json", "build/torch-cpu/relu/__init__.py",
                                  "build/torch-cuda/relu/ops.so"}));
}

TEST(KernelUpload, NewBranchDropsEveryOtherBuildAndBenchmarkFile) {
  const std::vector<UploadVariant> variants{{"torch-cpu", "x"}};
  const std::vector<LocalFile> uploaded{{"build/torch-cpu/a.py", "x"}, {"benchmarks/benchmark.py", "x"}};
  const auto stale = stale_files(remote({"README.md", ".gitattributes", "build/torch-cpu/a.py",
                                         "build/torch-cpu/old.py", "build/torch-cuda/a.py",
                                         "benchmarks/benchmark.py", "benchmarks/helper.py"}),
                                 uploaded, variants, BranchState::created);
  EXPECT_EQ(stale, (std::vector<std::string>{"benchmarks/helper.py", "build/torch-cpu/old.py",
                                             "build/torch-cuda/a.py"}));
}

TEST(KernelUpload, ExistingBranchKeepsOtherVariantsAndNonBenchmarkFiles) {
  const std::vector<UploadVariant> variants{{"torch-cpu", "x"}};
  const std::vector<LocalFile> uploaded{{"build/torch-cpu/a.py", "x"}};
  const auto stale = stale_files(remote({"build/torch-cpu/a.py", "build/torch-cpu/old.py",
                                         "build/torch-cpu-extra/a.py", "build/torch-cuda/a.py",
                                         "benchmarks/benchmark_old.py", "benchmarks/helper.py"}),
                                 uploaded, variants, BranchState::existing);
  EXPECT_EQ(stale, (std::vector<std::string>{"benchmarks/benchmark_old.py", "build/torch-cpu/old.py"}));
}

TEST(KernelUpload, UnchangedComparesGitOidOrLfsSha256) {
  write("f.bin", "bytes");
  LocalFile local{"f.bin", "f.bin"};
  EXPECT_TRUE(*unchanged(local, RemoteFile{"f.bin", git_blob_sha1("bytes"), std::nullopt}));
  EXPECT_FALSE(*unchanged(local, RemoteFile{"f.bin", git_blob_sha1("other"), std::nullopt}));
  EXPECT_TRUE(*unchanged(local, RemoteFile{"f.bin", "pointer-oid", sha256_hex("bytes")}));
}

TEST(KernelUpload, BatchMessages) {
  EXPECT_EQ(batch_message("Upload relu version 1: torch-cpu", 0, 1),
            "Upload relu version 1: torch-cpu");
  EXPECT_EQ(batch_message("Upload relu", 1, 3), "Upload relu (batch 2/3)");
}

// Issue 22 §5: the default title says what was uploaded, not which tool did it.
TEST(KernelUpload, DescribeUploadNamesKernelVersionAndVariants) {
  const auto described = describe_upload("relu", 1, "v1", {"torch-cpu", "torch29-cxx11-cu128-x86_64-linux"});
  EXPECT_EQ(described.title, "Upload relu version 1: torch-cpu, torch29-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(described.card_title, "Update the card of relu (version 1)");
  EXPECT_EQ(described.description,
            "2 build variant(s):\n- `torch-cpu`\n- `torch29-cxx11-cu128-x86_64-linux`\n\n"
            "Uploaded using `kernel-builder`.");
  EXPECT_EQ(describe_upload("relu", 2, "main", {"torch-cpu"}).title,
            "Upload relu version 2 to main: torch-cpu");
  EXPECT_EQ(describe_upload("relu", std::nullopt, "dev", {"torch-cpu"}).title,
            "Upload relu to dev: torch-cpu");
}

TEST(KernelUpload, DescribeUploadCountsVariantsThatDoNotFitTheTitle) {
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) {
    many.push_back(fmt::format("torch29-cxx11-cu12{}-x86_64-linux", i));
  }
  const auto described = describe_upload("relu", 3, "v3", many);
  EXPECT_EQ(described.title, "Upload relu version 3: 20 variants");
  EXPECT_NE(described.description.find("- `torch29-cxx11-cu1219-x86_64-linux`"), std::string::npos);
}

// The whole flow against a scripted server: a new branch, README on main, files on v1.
TEST(KernelUpload, FlowCreatesBranchAndCommitsBothBranches) {
  write("build/torch-cpu/metadata.json", "{}");
  write("build/CARD.md", "# card");
  const std::string main_sha(40, 'a');
  const std::string new_sha(40, 'b');
  auto transport = std::make_shared<testing::FakeTransport>();
  transport->push(200, {}, R"({"url":"http://hub/kernels/org/k"})");
  transport->push(200, {}, R"({"branches":[{"name":"main","ref":"refs/heads/main","targetCommit":")" +
                               main_sha + R"("}],"converts":[],"tags":[]})");
  transport->push(200);  // create branch v1
  transport->push(200, {}, R"({"branches":[{"name":"main","targetCommit":")" + main_sha +
                               R"("},{"name":"v1","targetCommit":")" + main_sha +
                               R"("}],"converts":[],"tags":[]})");
  transport->push(200, {}, R"([{"type":"file","oid":"x","size":1,"path":".gitattributes"}])");
  transport->push(200, {}, R"({"files":[{"path":"README.md","uploadMode":"regular","shouldIgnore":false}]})");
  transport->push(200, {}, R"([{"type":"file","oid":"x","size":1,"path":".gitattributes"},
                               {"type":"file","oid":"y","size":1,"path":"build/legacy/x.py"}])");
  transport->push(200, {}, R"({"files":[{"path":"build/torch-cpu/metadata.json","uploadMode":"regular","shouldIgnore":false}]})");
  transport->push(200, {}, R"({"commitOid":")" + new_sha + R"(","commitUrl":"u1"})");
  transport->push(200, {}, R"({"commitOid":")" + new_sha + R"(","commitUrl":"u2"})");
  Endpoint endpoint;
  endpoint.url = "http://hub";
  ClientOptions options;
  options.progress_bar = false;
  options.sleep = [](std::chrono::milliseconds) {};
  HubClient client(endpoint, options, transport);
  KernelUploadRequest request(RepoRef{*RepoId::parse("org/k"), RepoType::kernel}, "v1",
                              {{"torch-cpu", "build/torch-cpu"}});
  request.card = fs::path("build/CARD.md");
  std::vector<std::string> log;
  request.log = [&log](const std::string& line) { log.push_back(line); };
  auto outcome = upload_kernel(client, request);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, KernelUploadOutcome::Status::uploaded);
  ASSERT_EQ(outcome->commits.size(), 2u);
  EXPECT_EQ(outcome->commits[0].branch, "main");
  EXPECT_EQ(outcome->commits[1].branch, "v1");
  EXPECT_EQ(log, std::vector<std::string>{"Using branch `v1` (new)"});
  EXPECT_EQ(transport->pending(), 0u);
  const auto& requests = transport->requests();
  EXPECT_EQ(requests[2].url, "http://hub/api/kernels/org/k/branch/v1");
  const auto& v1_commit = requests.back();
  EXPECT_EQ(v1_commit.url, "http://hub/api/kernels/org/k/commit/v1");
  // The legacy variant inherited from main is deleted on the new branch.
  EXPECT_NE(v1_commit.body.find(R"({"key":"deletedFile","value":{"path":"build/legacy/x.py"}})"),
            std::string::npos);
  EXPECT_NE(v1_commit.body.find(R"("parentCommit":")" + main_sha), std::string::npos);
}


// Files the Hub marks `lfs` (binaries, files over 10 MB) go through the LFS batch API before
// the commit, which names them with lfsFile lines; an empty file stays regular whatever the
// server says, as huggingface_hub forces it.
TEST(KernelUpload, LfsFilesGoThroughTheBatchApiThenCommitAsLfsFileLines) {
  const std::string library = std::string("\x7f" "ELF", 4) + std::string(5000, '\0');
  write("build/torch-cpu/metadata.json", "{}");
  write("build/torch-cpu/relu/_relu.so", library);
  write("build/torch-cpu/relu/empty.so", "");
  const std::string head(40, 'a');
  auto transport = std::make_shared<testing::FakeTransport>();
  transport->push(200, {}, R"({"url":"http://hub/kernels/org/k"})");
  transport->push(200, {}, R"({"branches":[{"name":"main","targetCommit":")" + head +
                               R"("},{"name":"v1","targetCommit":")" + head + R"("}],"tags":[]})");
  transport->push(200, {}, "[]");
  transport->push(200, {}, R"({"files":[
      {"path":"build/torch-cpu/metadata.json","uploadMode":"regular","shouldIgnore":false},
      {"path":"build/torch-cpu/relu/_relu.so","uploadMode":"lfs","shouldIgnore":false},
      {"path":"build/torch-cpu/relu/empty.so","uploadMode":"lfs","shouldIgnore":false}]})");
  const auto sha256 = sha256_hex(library);
  transport->push(200, {}, nlohmann::json{{"objects", {{{"oid", sha256}, {"size", library.size()},
                                                        {"actions", {{"upload", {{"href", "http://cdn/put"}}}}}}}}}
                               .dump());
  transport->push(200);  // the PUT
  transport->push(200, {}, R"({"commitOid":")" + std::string(40, 'c') + R"(","commitUrl":"u"})");
  Endpoint endpoint;
  endpoint.url = "http://hub";
  ClientOptions options;
  options.progress_bar = false;
  options.sleep = [](std::chrono::milliseconds) {};
  HubClient client(endpoint, options, transport);
  KernelUploadRequest request(RepoRef{*RepoId::parse("org/k"), RepoType::kernel}, "v1",
                              {{"torch-cpu", "build/torch-cpu"}});
  std::vector<std::string> log;
  request.log = [&log](const std::string& line) { log.push_back(line); };
  auto outcome = upload_kernel(client, request);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(transport->pending(), 0u);
  const auto& requests = transport->requests();
  ASSERT_EQ(requests.size(), 7u);
  const auto batch = nlohmann::json::parse(requests[4].body);
  EXPECT_EQ(requests[4].url, "http://hub/kernels/org/k.git/info/lfs/objects/batch");
  EXPECT_EQ(batch["objects"], nlohmann::json::array({{{"oid", sha256}, {"size", library.size()}}}));
  EXPECT_EQ(batch["ref"]["name"], "v1");
  EXPECT_EQ(transport->uploads(), std::vector<std::string>{library});
  std::vector<nlohmann::json> lines;
  std::istringstream body(requests[6].body);
  for (std::string line; std::getline(body, line);) {
    lines.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1]["key"], "file");
  EXPECT_EQ(lines[1]["value"]["path"], "build/torch-cpu/metadata.json");
  EXPECT_EQ(lines[2], nlohmann::json({{"key", "lfsFile"},
                                      {"value", {{"path", "build/torch-cpu/relu/_relu.so"}, {"algo", "sha256"},
                                                 {"oid", sha256}, {"size", library.size()}}}}));
  EXPECT_EQ(lines[3]["key"], "file");
  EXPECT_EQ(lines[3]["value"]["path"], "build/torch-cpu/relu/empty.so");
  EXPECT_EQ(lines[3]["value"]["content"], "");
  EXPECT_EQ(log.back(), "Uploading 1 file(s) to `v1` with Git LFS (4.9 KiB)");
}

// A binary the Hub already holds under its sha256 is not sent again, but still committed.
TEST(KernelUpload, AnLfsObjectTheHubHasIsCommittedWithoutUpload) {
  const std::string library(3000, '\1');
  write("build/torch-cpu/_relu.so", library);
  const std::string head(40, 'a');
  auto transport = std::make_shared<testing::FakeTransport>();
  transport->push(200, {}, R"({"url":"http://hub/kernels/org/k"})");
  transport->push(200, {}, R"({"branches":[{"name":"v1","targetCommit":")" + head + R"("}],"tags":[]})");
  transport->push(200, {}, "[]");
  transport->push(200, {}, R"({"files":[{"path":"build/torch-cpu/_relu.so","uploadMode":"lfs","shouldIgnore":false}]})");
  const auto sha256 = sha256_hex(library);
  transport->push(200, {}, nlohmann::json{{"objects", {{{"oid", sha256}, {"size", library.size()}}}}}.dump());
  transport->push(200, {}, R"({"commitOid":")" + std::string(40, 'c') + R"(","commitUrl":"u"})");
  Endpoint endpoint;
  endpoint.url = "http://hub";
  ClientOptions options;
  options.progress_bar = false;
  HubClient client(endpoint, options, transport);
  KernelUploadRequest request(RepoRef{*RepoId::parse("org/k"), RepoType::kernel}, "v1",
                              {{"torch-cpu", "build/torch-cpu"}});
  auto outcome = upload_kernel(client, request);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_TRUE(transport->uploads().empty());
  EXPECT_NE(transport->requests().back().body.find(R"("key":"lfsFile")"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::hub
