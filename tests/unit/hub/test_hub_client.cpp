// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/hub/content_hash.hpp>

#include "fake_transport.hpp"

namespace kernelhub::hub {
namespace {

using testing::FakeReply;
using testing::FakeTransport;

const std::string k_sha = std::string(40, 'c');

struct ClientFixture {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::vector<std::chrono::milliseconds> sleeps;

  HubClient client(bool offline = false, std::optional<std::string> token = "hf_secret") {
    Endpoint endpoint;
    endpoint.url = "http://hub:8080/";
    endpoint.token = std::move(token);
    endpoint.offline = offline;
    ClientOptions options;
    options.progress_bar = false;
    options.sleep = [this](std::chrono::milliseconds delay) { sleeps.push_back(delay); };
    return HubClient(endpoint, options, transport);
  }
};

using testing::kernel_repo;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HubClient, OfflineMakesNoRequest) {
  ClientFixture f;
  auto client = f.client(/*offline=*/true);
  auto info = client.repo_info(kernel_repo(), "main");
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().kind, ErrorKind::offline);
  DownloadTask task{kernel_repo(), k_sha, "a.txt", "a.part", std::nullopt};
  EXPECT_EQ(client.download(task).error().kind, ErrorKind::offline);
  EXPECT_TRUE(f.transport->requests().empty());
}

TEST(HubClient, RepoInfoUsesRevisionFormAndSendsTokenAndAgent) {
  ClientFixture f;
  f.transport->push(200, {}, R"({"id":"org/relu","sha":")" + k_sha +
                                 R"(","siblings":[{"rfilename":"README.md"}]})");
  auto info = f.client().repo_info(kernel_repo(), "feature/x");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sha, k_sha);
  EXPECT_EQ(info->siblings, std::vector<std::string>{"README.md"});
  const auto& request = f.transport->requests().at(0);
  EXPECT_EQ(request.url, "http://hub:8080/api/kernels/org/relu/revision/feature%2Fx");
  EXPECT_EQ(FakeTransport::header(request, "Authorization"), "Bearer hf_secret");
  EXPECT_NE(FakeTransport::header(request, "User-Agent").find("kernelhub/"), std::string::npos);
}

TEST(HubClient, NotFoundKindsComeFromErrorCode) {
  ClientFixture f;
  f.transport->push(404, {{"X-Error-Code", "RepoNotFound"}}, R"({"error":"nope"})");
  auto info = f.client().repo_info(kernel_repo());
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().kind, ErrorKind::repo_not_found);
  EXPECT_TRUE(f.sleeps.empty());  // a 404 is not retried
}

TEST(HubClient, RetriesServerErrorsWithBackoffThenSucceeds) {
  ClientFixture f;
  f.transport->push(503);
  f.transport->push(FakeTransport::broken());
  f.transport->push(429, {{"Retry-After", "3"}});
  f.transport->push(200, {}, R"({"branches":[{"name":"v1","ref":"refs/heads/v1","targetCommit":")" +
                                 k_sha + R"("}],"converts":[],"tags":[]})");
  auto refs = f.client().list_refs(kernel_repo());
  ASSERT_TRUE(refs) << refs.error().message;
  ASSERT_EQ(refs->branches.size(), 1u);
  EXPECT_EQ(refs->branches[0].name, "v1");
  EXPECT_EQ(refs->branches[0].target_commit, k_sha);
  using std::chrono::milliseconds;
  EXPECT_EQ(f.sleeps, (std::vector<milliseconds>{milliseconds(1000), milliseconds(2000),
                                                 milliseconds(4000)}));
}

TEST(HubClient, RetriesAreBounded) {
  ClientFixture f;
  for (int i = 0; i < 5; ++i) {
    f.transport->push(500);
  }
  auto refs = f.client().list_refs(kernel_repo());
  ASSERT_FALSE(refs);
  EXPECT_EQ(refs.error().kind, ErrorKind::http_status);
  EXPECT_EQ(refs.error().status, 500);
  EXPECT_EQ(f.transport->requests().size(), 5u);
  EXPECT_EQ(f.sleeps.size(), 4u);
}

// A loopback port nothing listens on: bound, read, closed.
int closed_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// Issue 22 §9: with no Hub listening, get_kernel backed off 1+2+4+8 s per request before saying
// "Couldn't connect to server". A refused connection fails at the first try and says which
// Hub could not be reached.
TEST(HubClient, ARefusedConnectionIsNotRetriedAndNamesTheHub) {
  std::vector<std::chrono::milliseconds> sleeps;
  Endpoint endpoint;
  endpoint.url = fmt::format("http://127.0.0.1:{}", closed_loopback_port());
  ClientOptions options;
  options.progress_bar = false;
  options.sleep = [&sleeps](std::chrono::milliseconds delay) { sleeps.push_back(delay); };
  const HubClient client(endpoint, options);
  const auto refs = client.list_refs(kernel_repo());
  ASSERT_FALSE(refs);
  EXPECT_EQ(refs.error().kind, ErrorKind::network);
  EXPECT_TRUE(sleeps.empty());
  EXPECT_TRUE(refs.error().message.starts_with("cannot reach the Hub at " + endpoint.url))
      << refs.error().message;
  EXPECT_NE(refs.error().message.find("HF_HUB_OFFLINE=1"), std::string::npos);
}

TEST(HubClient, TreeFollowsLinkPages) {
  ClientFixture f;
  f.transport->push(200, {{"Link", R"(<http://hub:8080/api/kernels/org/relu/tree/x?cursor=1>; rel="next")"}},
                    R"([{"type":"directory","oid":"d","size":0,"path":"build/torch-cpu"}])");
  f.transport->push(200, {},
                    R"([{"type":"file","oid":"o","size":9,"path":"build/torch-cpu/w.bin",
                        "lfs":{"oid":"s256","size":9,"pointerSize":130}}])");
  auto tree = f.client().list_tree(kernel_repo(), k_sha, "build", Recursive::yes);
  ASSERT_TRUE(tree) << tree.error().message;
  ASSERT_EQ(tree->size(), 2u);
  EXPECT_EQ((*tree)[0].kind, TreeEntry::Kind::directory);
  EXPECT_EQ((*tree)[1].blob_id(), "s256");
  EXPECT_EQ(f.transport->requests()[0].url,
            "http://hub:8080/api/kernels/org/relu/tree/" + k_sha + "/build?recursive=true&expand=false");
  EXPECT_EQ(f.transport->requests()[1].url, "http://hub:8080/api/kernels/org/relu/tree/x?cursor=1");
}

TEST(HubClient, MetadataFollowsRelativeRedirectsOnly) {
  ClientFixture f;
  f.transport->push(307, {{"Location", "/kernels/org/renamed/resolve/main/a.txt?x=1"}});
  f.transport->push(302, {{"Location", "https://cdn.example/blob"},
                          {"X-Linked-Etag", "\"" + std::string(64, 'e') + "\""},
                          {"X-Linked-Size", "123"},
                          {"X-Repo-Commit", k_sha}});
  auto metadata = f.client().file_metadata(kernel_repo(), "main", "a.txt");
  ASSERT_TRUE(metadata) << metadata.error().message;
  EXPECT_EQ(metadata->etag, std::string(64, 'e'));
  EXPECT_EQ(metadata->size, 123u);
  EXPECT_EQ(metadata->commit, k_sha);
  EXPECT_EQ(metadata->location, "https://cdn.example/blob");
  EXPECT_EQ(f.transport->requests()[0].method, "HEAD");
  EXPECT_EQ(f.transport->requests()[1].url, "http://hub:8080/kernels/org/renamed/resolve/main/a.txt");
}

TEST(HubClient, MetadataOfPlainFile) {
  ClientFixture f;
  f.transport->push(200, {{"ETag", "W/\"abc\""}, {"X-Repo-Commit", k_sha}, {"Content-Length", "9"}});
  auto metadata = f.client().file_metadata(kernel_repo(), "v1", "a b.txt");
  ASSERT_TRUE(metadata);
  EXPECT_EQ(metadata->etag, "abc");
  EXPECT_EQ(metadata->size, 9u);
  EXPECT_EQ(metadata->location, "http://hub:8080/kernels/org/relu/resolve/v1/a%20b.txt");
}

TEST(HubClient, MetadataMissingFileKeepsRepoCommit) {
  ClientFixture f;
  f.transport->push(404, {{"X-Error-Code", "EntryNotFound"}, {"X-Repo-Commit", k_sha}});
  auto metadata = f.client().file_metadata(kernel_repo(), "v1", "kernel-status.toml");
  ASSERT_FALSE(metadata);
  EXPECT_EQ(metadata.error().kind, ErrorKind::entry_not_found);
  EXPECT_EQ(metadata.error().repo_commit, k_sha);
}

FileMetadata metadata_for(const std::string& content, std::string location) {
  return FileMetadata{k_sha, git_blob_sha1(content), content.size(), std::move(location)};
}

TEST(HubClient, DownloadVerifiesTheGitBlobSha) {
  ClientFixture f;
  const std::string content = "hello kernel\n";
  f.transport->push(200, {}, content);
  DownloadTask task{kernel_repo(), k_sha, "a.txt", "blobs/a.part",
                    metadata_for(content, "http://hub:8080/kernels/org/relu/resolve/x/a.txt")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(read("blobs/a.part"), content);
  EXPECT_EQ(FakeTransport::header(f.transport->requests()[0], "Authorization"), "Bearer hf_secret");
}

TEST(HubClient, DownloadRejectsCorruptBytesAndRemovesThem) {
  ClientFixture f;
  const std::string content = "hello kernel\n";
  f.transport->push(200, {}, "hello kernEl\n");
  DownloadTask task{kernel_repo(), k_sha, "a.txt", "a.part",
                    metadata_for(content, "http://hub:8080/kernels/org/relu/resolve/x/a.txt")};
  auto result = f.client().download(task);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::checksum);
  EXPECT_FALSE(std::filesystem::exists("a.part"));
}

TEST(HubClient, DownloadResumesWithRangeAfterABrokenStream) {
  ClientFixture f;
  const std::string content = "0123456789abcdef";
  std::ofstream("a.part", std::ios::binary) << "0123";
  f.transport->push(FakeTransport::broken(206, {{"Content-Range", "bytes 4-15/16"}}, "4567"));
  f.transport->push(206, {{"Content-Range", "bytes 8-15/16"}}, "89abcdef");
  DownloadTask task{kernel_repo(), k_sha, "a.txt", "a.part",
                    metadata_for(content, "http://hub:8080/kernels/org/relu/resolve/x/a.txt")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->resumed_from, 4u);
  EXPECT_EQ(read("a.part"), content);
  EXPECT_EQ(FakeTransport::header(f.transport->requests()[0], "Range"), "bytes=4-");
  EXPECT_EQ(FakeTransport::header(f.transport->requests()[1], "Range"), "bytes=8-");
}

// The hash is taken while the bytes arrive; on a resume the bytes already on disk are read
// back into it, so a leftover that does not match the file still fails the check.
TEST(HubClient, DownloadResumedOverCorruptLeftoverBytesFailsTheCheck) {
  ClientFixture f;
  const std::string content = "0123456789abcdef";
  std::ofstream("a.part", std::ios::binary) << "0X23";
  f.transport->push(206, {{"Content-Range", "bytes 4-15/16"}}, "456789abcdef");
  DownloadTask task{kernel_repo(), k_sha, "a.txt", "a.part",
                    metadata_for(content, "http://hub:8080/kernels/org/relu/resolve/x/a.txt")};
  auto result = f.client().download(task);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::checksum);
  EXPECT_NE(result.error().message.find(git_blob_sha1("0X23456789abcdef")), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists("a.part"));
}

TEST(HubClient, DownloadRestartsWhenTheServerIgnoresRange) {
  ClientFixture f;
  const std::string content = "0123456789";
  std::ofstream("a.part", std::ios::binary) << "XXXX";
  f.transport->push(200, {}, content);
  DownloadTask task{kernel_repo(), k_sha, "a.txt", "a.part",
                    metadata_for(content, "http://hub:8080/kernels/org/relu/resolve/x/a.txt")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(read("a.part"), content);
}

TEST(HubClient, DownloadDropsTheTokenWhenRedirectedToAnotherHost) {
  ClientFixture f;
  const std::string content = "cdn bytes";
  f.transport->push(302, {{"Location", "http://cdn:9000/blob/1"}});
  f.transport->push(200, {}, content);
  DownloadTask task{kernel_repo(), k_sha, "w.bin", "w.part",
                    metadata_for(content, "http://hub:8080/kernels/org/relu/resolve/x/w.bin")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(FakeTransport::header(f.transport->requests()[0], "Authorization"), "Bearer hf_secret");
  EXPECT_EQ(f.transport->requests()[1].url, "http://cdn:9000/blob/1");
  EXPECT_EQ(FakeTransport::header(f.transport->requests()[1], "Authorization"), "");
}

TEST(HubClient, EmptyFileNeedsNoGet) {
  ClientFixture f;
  DownloadTask task{kernel_repo(), k_sha, "empty", "e.part", metadata_for("", "http://hub:8080/x")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(std::filesystem::exists("e.part"));
  EXPECT_TRUE(f.transport->requests().empty());
}

TEST(HubClient, DownloadAllKeepsTaskOrder) {
  ClientFixture f;
  std::vector<DownloadTask> tasks;
  for (int i = 0; i < 3; ++i) {
    // The same body for every task, so the order the threads take the replies in is irrelevant.
    f.transport->push(200, {}, "same");
    tasks.push_back(DownloadTask{kernel_repo(), k_sha, "f" + std::to_string(i),
                                 "f" + std::to_string(i) + ".part",
                                 metadata_for("same", "http://hub:8080/x")});
  }
  tasks.push_back(DownloadTask{kernel_repo(), k_sha, "bad", "bad.part",
                               FileMetadata{k_sha, git_blob_sha1("other"), 0, "http://hub:8080/x"}});
  auto results = f.client().download_all(tasks);
  ASSERT_EQ(results.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(results[i]) << results[i].error().message;
    EXPECT_EQ(read("f" + std::to_string(i) + ".part"), "same");
  }
  EXPECT_FALSE(results[3]);
}

TEST(HubClient, CreateRepoTreatsConflictAsSuccessAndReadsUrl) {
  ClientFixture f;
  f.transport->push(409, {}, R"({"error":"exists","url":"http://hub:8080/kernels/org/relu"})");
  auto url = f.client().create_repo(kernel_repo());
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_EQ(*url, "http://hub:8080/kernels/org/relu");
  const auto& request = f.transport->requests()[0];
  EXPECT_EQ(request.url, "http://hub:8080/api/repos/create");
  const auto body = nlohmann::json::parse(request.body);
  EXPECT_EQ(body["name"], "relu");
  EXPECT_EQ(body["organization"], "org");
  EXPECT_EQ(body["type"], "kernel");
}

TEST(HubClient, BranchAndTagUrlsQuoteRevisions) {
  ClientFixture f;
  f.transport->push(200);
  f.transport->push(409);
  f.transport->push(200);
  EXPECT_TRUE(f.client().create_branch(kernel_repo(), "dev/1"));
  EXPECT_TRUE(f.client().create_branch(kernel_repo(), "v1", std::nullopt, ExistOk::yes));
  EXPECT_TRUE(f.client().create_tag(kernel_repo(), "dev/1", "t1"));
  EXPECT_EQ(f.transport->requests()[0].url, "http://hub:8080/api/kernels/org/relu/branch/dev%2F1");
  EXPECT_EQ(f.transport->requests()[2].url, "http://hub:8080/api/kernels/org/relu/tag/dev%2F1");
  EXPECT_EQ(nlohmann::json::parse(f.transport->requests()[2].body)["tag"], "t1");
}

TEST(HubClient, PreuploadBatchesAndParsesAnswers) {
  ClientFixture f;
  std::vector<PreuploadFile> files;
  for (int i = 0; i < 300; ++i) {
    files.push_back(PreuploadFile{"f" + std::to_string(i), 3, "abc"});
  }
  auto answer = [](int first, int count) {
    nlohmann::json list = nlohmann::json::array();
    for (int i = first; i < first + count; ++i) {
      list.push_back({{"path", "f" + std::to_string(i)}, {"uploadMode", "regular"},
                      {"shouldIgnore", false}, {"oid", i == 0 ? nlohmann::json("x") : nlohmann::json(nullptr)}});
    }
    return nlohmann::json{{"files", list}}.dump();
  };
  f.transport->push(200, {}, answer(0, 256));
  f.transport->push(200, {}, answer(256, 44));
  auto answers = f.client().preupload(kernel_repo(), "v1", files);
  ASSERT_TRUE(answers) << answers.error().message;
  ASSERT_EQ(answers->size(), 300u);
  EXPECT_EQ((*answers)[0].oid, "x");
  EXPECT_FALSE((*answers)[1].oid);
  EXPECT_EQ(f.transport->requests().size(), 2u);
  const auto first = nlohmann::json::parse(f.transport->requests()[0].body);
  EXPECT_EQ(first["files"].size(), 256u);
  EXPECT_EQ(first["files"][0]["sample"], "YWJj");
}

TEST(HubClient, CommitSendsNdjson) {
  ClientFixture f;
  std::ofstream("local.bin", std::ios::binary) << "from disk";
  f.transport->push(200, {}, R"({"commitOid":")" + k_sha + R"(","commitUrl":"http://hub:8080/kernels/org/relu/commit/x"})");
  std::vector<CommitOperation> operations{
      {CommitOperation::Kind::add_file, "build/a.txt", std::nullopt, "inline"},
      {CommitOperation::Kind::add_file, "./build/b.bin", std::filesystem::path("local.bin"), {}},
      {CommitOperation::Kind::delete_file, "old.txt", std::nullopt, {}},
      {CommitOperation::Kind::delete_folder, "build/stale", std::nullopt, {}},
  };
  auto result = f.client().commit(kernel_repo(), "v1", operations, "msg", {}, k_sha);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->commit_oid, k_sha);
  const auto& request = f.transport->requests()[0];
  EXPECT_EQ(request.url, "http://hub:8080/api/kernels/org/relu/commit/v1");
  EXPECT_EQ(FakeTransport::header(request, "Content-Type"), "application/x-ndjson");
  std::vector<nlohmann::json> lines;
  std::istringstream body(request.body);
  for (std::string line; std::getline(body, line);) {
    lines.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0]["value"]["parentCommit"], k_sha);
  EXPECT_EQ(lines[1]["value"]["content"], base64_encode("inline"));
  EXPECT_EQ(lines[2]["value"]["path"], "build/b.bin");
  EXPECT_EQ(lines[2]["value"]["content"], base64_encode("from disk"));
  EXPECT_EQ(lines[3]["key"], "deletedFile");
  EXPECT_EQ(lines[4]["value"]["path"], "build/stale/");
}

// The lfsFile line of _commit_api.py's _prepare_commit_payload, fields in its order.
TEST(HubClient, CommitSendsLfsFileLines) {
  ClientFixture f;
  f.transport->push(200, {}, R"({"commitOid":")" + k_sha + R"(","commitUrl":"u"})");
  const std::string oid(64, 'e');
  CommitOperation lfs{CommitOperation::Kind::add_lfs_file, "build/torch-cpu/_relu.so", std::nullopt, {}};
  lfs.lfs_sha256 = oid;
  lfs.lfs_size = 12582912;
  auto result = f.client().commit(kernel_repo(), "v1", {lfs}, "msg");
  ASSERT_TRUE(result) << result.error().message;
  const auto& body = f.transport->requests()[0].body;
  const auto line = body.substr(body.find('\n') + 1);
  EXPECT_EQ(line, R"({"key":"lfsFile","value":{"path":"build/torch-cpu/_relu.so","algo":"sha256","oid":")" + oid +
                      R"(","size":12582912}})" "\n");
}

FileMetadata lfs_metadata(const std::string& content, std::string location) {
  return FileMetadata{k_sha, sha256_hex(content), content.size(), std::move(location)};
}

// An LFS file as the Hub serves it: the resolve URL answers 302 to a CDN, whose bytes are
// checked against the sha256 of X-Linked-Etag; an interrupted download resumes there with Range
// and without the token.
TEST(HubClient, LfsDownloadFollowsTheCdnRedirectResumesAndChecksTheSha256) {
  ClientFixture f;
  const std::string content = "0123456789abcdef";
  std::ofstream("w.part", std::ios::binary) << "0123";
  f.transport->push(302, {{"Location", "http://cdn:9000/blob/w?sig=1"}});
  f.transport->push(FakeTransport::broken(206, {{"Content-Range", "bytes 4-15/16"}}, "4567"));
  f.transport->push(206, {{"Content-Range", "bytes 8-15/16"}}, "89abcdef");
  DownloadTask task{kernel_repo(), k_sha, "w.bin", "w.part",
                    lfs_metadata(content, "http://hub:8080/kernels/org/relu/resolve/x/w.bin")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(read("w.part"), content);
  const auto& requests = f.transport->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(FakeTransport::header(requests[0], "Range"), "bytes=4-");
  for (std::size_t i = 1; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].url, "http://cdn:9000/blob/w?sig=1");
    EXPECT_EQ(FakeTransport::header(requests[i], "Authorization"), "");
  }
  EXPECT_EQ(FakeTransport::header(requests[1], "Range"), "bytes=4-");
  EXPECT_EQ(FakeTransport::header(requests[2], "Range"), "bytes=8-");
}

// Bytes arrive in libcurl's 16 KiB pieces and are gathered before they are written: a stream
// that breaks after 1.5 MiB leaves every byte it delivered on disk (none left in the gather
// buffer), the resume appends the rest, and the sha256 taken on the way covers both parts.
TEST(HubClient, LfsDownloadInSmallPiecesKeepsEveryByteOfABrokenStream) {
  ClientFixture f;
  std::string content;
  for (std::size_t i = 0; content.size() < (5u << 19) + 7; ++i) {
    content += fmt::format("{:08x}", i * 2654435761u);
  }
  const std::size_t cut = (3u << 19) + 5;
  f.transport->push(302, {{"Location", "http://cdn:9000/blob/w"}});
  FakeReply broken = FakeTransport::broken(200, {}, content.substr(0, cut));
  broken.chunk_size = 16 * 1024;
  f.transport->push(broken);
  FakeReply rest;
  rest.status = 206;
  rest.headers = {{"Content-Range", fmt::format("bytes {}-{}/{}", cut, content.size() - 1,
                                                content.size())}};
  rest.body = content.substr(cut);
  rest.chunk_size = 16 * 1024;
  f.transport->push(rest);
  DownloadTask task{kernel_repo(), k_sha, "w.bin", "w.part",
                    lfs_metadata(content, "http://hub:8080/kernels/org/relu/resolve/x/w.bin")};
  auto result = f.client().download(task);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(read("w.part"), content);
  ASSERT_EQ(f.transport->requests().size(), 3u);
  EXPECT_EQ(FakeTransport::header(f.transport->requests()[2], "Range"), fmt::format("bytes={}-", cut));
}

TEST(HubClient, LfsDownloadRefusesBytesThatDoNotHashToTheSha256) {
  ClientFixture f;
  const std::string content = "0123456789";
  f.transport->push(302, {{"Location", "http://cdn:9000/blob/w"}});
  f.transport->push(200, {}, "0123456780");
  DownloadTask task{kernel_repo(), k_sha, "w.bin", "w.part",
                    lfs_metadata(content, "http://hub:8080/kernels/org/relu/resolve/x/w.bin")};
  auto result = f.client().download(task);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::checksum);
  EXPECT_NE(result.error().message.find(sha256_hex(content)), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists("w.part"));
}

// The HEAD of an LFS file (hub-api.md §2.4): the blob's name and size come from X-Linked-Etag
// and X-Linked-Size, the bytes from the absolute Location, which is not followed by the HEAD.
TEST(HubClient, MetadataOfAnLfsFileNamesTheSha256AndTheCdnLocation) {
  ClientFixture f;
  const std::string sha256(64, 'd');
  f.transport->push(302, {{"Location", "https://cdn.example/blob?sig=2"},
                          {"X-Linked-Etag", "\"" + sha256 + "\""},
                          {"X-Linked-Size", "12582912"},
                          {"ETag", "W/\"pointer\""},
                          {"X-Repo-Commit", k_sha},
                          {"Content-Length", "0"}});
  auto metadata = f.client().file_metadata(kernel_repo(), "main", "build/x.so");
  ASSERT_TRUE(metadata) << metadata.error().message;
  EXPECT_EQ(metadata->etag, sha256);
  EXPECT_EQ(metadata->size, 12582912u);
  EXPECT_EQ(metadata->location, "https://cdn.example/blob?sig=2");
  EXPECT_EQ(f.transport->requests().size(), 1u);
}

TEST(HubClient, CommitRefusesDangerousPaths) {
  ClientFixture f;
  for (const char* path : {"../x", "a/.git/config", ".cache/huggingface/x", "a/./b"}) {
    std::vector<CommitOperation> operations{{CommitOperation::Kind::add_file, path, std::nullopt, "x"}};
    auto result = f.client().commit(kernel_repo(), "main", operations, "msg");
    ASSERT_FALSE(result) << path;
    EXPECT_EQ(result.error().kind, ErrorKind::invalid_argument);
  }
  EXPECT_TRUE(f.transport->requests().empty());
}

}  // namespace
}  // namespace kernelhub::hub
