// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/hub/content_hash.hpp>

#include "fake_transport.hpp"

namespace kernelhub::hub {
namespace {

using nlohmann::json;
using testing::FakeTransport;

constexpr const char* k_batch_url = "http://hub:8080/kernels/org/relu.git/info/lfs/objects/batch";

struct LfsFixture {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::vector<std::chrono::milliseconds> sleeps;

  HubClient client() {
    Endpoint endpoint;
    endpoint.url = "http://hub:8080";
    endpoint.token = "hf_secret";
    ClientOptions options;
    options.progress_bar = false;
    // One object at a time so the scripted replies meet their requests in order.
    options.parallel_uploads = 1;
    options.sleep = [this](std::chrono::milliseconds delay) { sleeps.push_back(delay); };
    return HubClient(endpoint, options, transport);
  }
};

using testing::kernel_repo;

LfsFile lfs_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return LfsFile{"build/torch-cpu/" + path, path, sha256_hex(content), content.size()};
}

json batch_answer(std::vector<json> objects) { return json{{"transfer", "basic"}, {"objects", objects}}; }

json with_upload(const LfsFile& file, json upload, std::optional<json> verify = std::nullopt) {
  json actions{{"upload", std::move(upload)}};
  if (verify) {
    actions["verify"] = *verify;
  }
  return json{{"oid", file.sha256}, {"size", file.size}, {"actions", actions}};
}

TEST(HubClientLfs, BatchRequestAsHuggingfaceHubSendsIt) {
  LfsFixture f;
  const auto file = lfs_file("a.so", std::string("ELF\0binary", 10));
  f.transport->push(200, {}, batch_answer({json{{"oid", file.sha256}, {"size", file.size}}}).dump());
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_TRUE(summary) << summary.error().message;
  const auto& batch = f.transport->requests().at(0);
  EXPECT_EQ(batch.method, "POST");
  EXPECT_EQ(batch.url, k_batch_url);
  EXPECT_EQ(FakeTransport::header(batch, "Accept"), "application/vnd.git-lfs+json");
  EXPECT_EQ(FakeTransport::header(batch, "Content-Type"), "application/vnd.git-lfs+json");
  EXPECT_EQ(FakeTransport::header(batch, "Authorization"), "Bearer hf_secret");
  const auto body = json::parse(batch.body);
  EXPECT_EQ(body, json({{"operation", "upload"},
                        {"transfers", {"basic", "multipart"}},
                        {"objects", {{{"oid", file.sha256}, {"size", file.size}}}},
                        {"hash_algo", "sha256"},
                        {"ref", {{"name", "v1"}}}}));
}

TEST(HubClientLfs, BasicPutsTheFileWithoutTheTokenThenVerifies) {
  LfsFixture f;
  const auto file = lfs_file("a.so", std::string(1000, 'x') + "tail");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://cdn:9000/put/1?sig=s"}, {"header", {{"X-Upload", "yes"}}}},
                                                       json{{"href", "http://hub:8080/kernels/org/relu.git/info/lfs/objects/verify"}})})
                                 .dump());
  f.transport->push(200);
  f.transport->push(200);
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->uploaded, 1u);
  EXPECT_EQ(summary->bytes_sent, file.size);
  const auto& requests = f.transport->requests();
  ASSERT_EQ(requests.size(), 3u);
  const auto& put = requests[1];
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.url, "http://cdn:9000/put/1?sig=s");
  EXPECT_EQ(FakeTransport::header(put, "Authorization"), "");
  EXPECT_EQ(FakeTransport::header(put, "X-Upload"), "yes");
  ASSERT_EQ(f.transport->uploads().size(), 1u);
  EXPECT_EQ(f.transport->uploads()[0], std::string(1000, 'x') + "tail");
  const auto& verify = requests[2];
  EXPECT_EQ(verify.method, "POST");
  EXPECT_EQ(verify.url, "http://hub:8080/kernels/org/relu.git/info/lfs/objects/verify");
  EXPECT_EQ(FakeTransport::header(verify, "Authorization"), "Bearer hf_secret");
  EXPECT_EQ(json::parse(verify.body), json({{"oid", file.sha256}, {"size", file.size}}));
}

TEST(HubClientLfs, VerifyOnAnotherHostGetsNoToken) {
  LfsFixture f;
  const auto file = lfs_file("a.so", "abc");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://cdn:9000/put"}},
                                                       json{{"href", "http://elsewhere:1/verify"}, {"header", {{"Authorization", "Basic xyz"}}}})})
                                 .dump());
  f.transport->push(200);
  f.transport->push(200);
  ASSERT_TRUE(f.client().upload_lfs_files(kernel_repo(), "v1", {file}));
  const auto& verify = f.transport->requests().at(2);
  EXPECT_EQ(FakeTransport::header(verify, "Authorization"), "Basic xyz");
}

// 10 bytes in chunks of 4: parts of 4, 4 and 2 bytes, each to its numbered URL, then the
// completion with the parts' ETags as they came (quotes kept), without the token.
TEST(HubClientLfs, MultipartSendsEachPartAndCompletes) {
  LfsFixture f;
  const auto file = lfs_file("big.so", "0123456789");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://hub:8080/lfs/complete/1"},
                                                              {"header", {{"chunk_size", "4"},
                                                                          {"1", "http://s3:9/p1"},
                                                                          {"2", "http://s3:9/p2"},
                                                                          {"3", "http://s3:9/p3"}}}})})
                                 .dump());
  f.transport->push(200, {{"ETag", "\"e1\""}});
  f.transport->push(200, {{"ETag", "\"e2\""}});
  f.transport->push(200, {{"etag", "\"e3\""}});
  f.transport->push(200);
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(f.transport->uploads(), (std::vector<std::string>{"0123", "4567", "89"}));
  const auto& requests = f.transport->requests();
  ASSERT_EQ(requests.size(), 5u);
  for (int part = 1; part <= 3; ++part) {
    EXPECT_EQ(requests[part].method, "PUT");
    EXPECT_EQ(requests[part].url, "http://s3:9/p" + std::to_string(part));
    EXPECT_EQ(FakeTransport::header(requests[part], "Authorization"), "");
    EXPECT_TRUE(requests[part].body.empty());
  }
  const auto& completion = requests[4];
  EXPECT_EQ(completion.method, "POST");
  EXPECT_EQ(completion.url, "http://hub:8080/lfs/complete/1");
  EXPECT_EQ(FakeTransport::header(completion, "Content-Type"), "application/vnd.git-lfs+json");
  EXPECT_EQ(FakeTransport::header(completion, "Accept"), "application/vnd.git-lfs+json");
  EXPECT_EQ(FakeTransport::header(completion, "Authorization"), "");
  EXPECT_EQ(json::parse(completion.body),
            json({{"oid", file.sha256},
                  {"parts", {{{"partNumber", 1}, {"etag", "\"e1\""}},
                             {{"partNumber", 2}, {"etag", "\"e2\""}},
                             {{"partNumber", 3}, {"etag", "\"e3\""}}}}}));
}

TEST(HubClientLfs, AFailedPartIsSentAgain) {
  LfsFixture f;
  const auto file = lfs_file("big.so", "0123456789");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://hub:8080/c"},
                                                              {"header", {{"chunk_size", 5}, {"1", "http://s3:9/p1"}, {"2", "http://s3:9/p2"}}}})})
                                 .dump());
  f.transport->push(200, {{"ETag", "\"e1\""}});
  f.transport->push(503);                       // part 2, first try
  f.transport->push(FakeTransport::broken());   // part 2, second try: the connection drops
  f.transport->push(200, {{"ETag", "\"e2\""}}); // part 2, third try
  f.transport->push(200);
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(f.transport->uploads(), (std::vector<std::string>{"01234", "56789", "56789", "56789"}));
  EXPECT_EQ(f.sleeps.size(), 2u);
  EXPECT_EQ(json::parse(f.transport->requests().back().body)["parts"][1]["etag"], "\"e2\"");
}

TEST(HubClientLfs, APartRefusedForGoodIsAnError) {
  LfsFixture f;
  const auto file = lfs_file("big.so", "0123456789");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://hub:8080/c"},
                                                              {"header", {{"chunk_size", 5}, {"1", "http://s3:9/p1"}, {"2", "http://s3:9/p2"}}}})})
                                 .dump());
  f.transport->push(403, {}, "expired signature");
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message.find("build/torch-cpu/big.so"), std::string::npos) << summary.error().message;
  EXPECT_NE(summary.error().message.find("part 1 of 2"), std::string::npos) << summary.error().message;
  EXPECT_EQ(f.transport->pending(), 0u);
}

TEST(HubClientLfs, APartWithoutAnEtagIsAnError) {
  LfsFixture f;
  const auto file = lfs_file("big.so", "0123456789");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://hub:8080/c"},
                                                              {"header", {{"chunk_size", 10}, {"1", "http://s3:9/p1"}}}})})
                                 .dump());
  f.transport->push(200);
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().kind, ErrorKind::invalid_response);
}

TEST(HubClientLfs, ObjectsTheServerHasAreNotSent) {
  LfsFixture f;
  const auto have = lfs_file("have.so", "already there");
  const auto send = lfs_file("new.so", "new bytes");
  f.transport->push(200, {}, batch_answer({json{{"oid", have.sha256}, {"size", have.size}},
                                           with_upload(send, {{"href", "http://cdn:9000/put"}})})
                                 .dump());
  f.transport->push(200);
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {have, send});
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->already_present, 1u);
  EXPECT_EQ(summary->uploaded, 1u);
  EXPECT_EQ(f.transport->uploads(), std::vector<std::string>{"new bytes"});
  EXPECT_EQ(f.transport->requests().size(), 2u);
}

TEST(HubClientLfs, TwoPathsWithTheSameBytesAreOneObject) {
  LfsFixture f;
  auto first = lfs_file("a.so", "same");
  auto second = lfs_file("b.so", "same");
  f.transport->push(200, {}, batch_answer({with_upload(first, {{"href", "http://cdn:9000/put"}})}).dump());
  f.transport->push(200);
  ASSERT_TRUE(f.client().upload_lfs_files(kernel_repo(), "v1", {first, second}));
  EXPECT_EQ(json::parse(f.transport->requests()[0].body)["objects"].size(), 1u);
  EXPECT_EQ(f.transport->uploads().size(), 1u);
}

TEST(HubClientLfs, BatchesOf256Objects) {
  LfsFixture f;
  std::vector<LfsFile> files;
  json first = json::array();
  json second = json::array();
  for (int i = 0; i < 300; ++i) {
    files.push_back(lfs_file("f" + std::to_string(i), "content " + std::to_string(i)));
    (i < 256 ? first : second).push_back(json{{"oid", files.back().sha256}, {"size", files.back().size}});
  }
  f.transport->push(200, {}, json{{"objects", first}}.dump());
  f.transport->push(200, {}, json{{"objects", second}}.dump());
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", files);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->already_present, 300u);
  ASSERT_EQ(f.transport->requests().size(), 2u);
  EXPECT_EQ(json::parse(f.transport->requests()[1].body)["objects"].size(), 44u);
}

TEST(HubClientLfs, ObjectErrorsNameTheFiles) {
  LfsFixture f;
  const auto file = lfs_file("a.so", "abc");
  f.transport->push(200, {}, json{{"objects", {{{"oid", file.sha256}, {"size", file.size},
                                                {"error", {{"code", 422}, {"message", "object too large"}}}}}}}.dump());
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message.find("\"build/torch-cpu/a.so\""), std::string::npos) << summary.error().message;
  EXPECT_NE(summary.error().message.find("object too large"), std::string::npos);
}

TEST(HubClientLfs, AnObjectLeftUnansweredIsAnError) {
  LfsFixture f;
  const auto file = lfs_file("a.so", "abc");
  f.transport->push(200, {}, json{{"objects", json::array()}}.dump());
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().kind, ErrorKind::invalid_response);
}

// The request carries the path and range only; the bytes are read from disk a send buffer at a
// time while the request goes out, and again for a retry: no request holds the file.
TEST(HubClientLfs, TheFileIsReadInPiecesNeverWhole) {
  LfsFixture f;
  std::string content;
  for (int i = 0; content.size() < 3 * 1024 * 1024 + 5; ++i) {
    content += std::to_string(i) + ",";
  }
  const auto file = lfs_file("big.so", content);
  const std::uint64_t chunk = 1024 * 1024;
  json header{{"chunk_size", chunk}};
  for (int part = 1; part <= 4; ++part) {
    header[std::to_string(part)] = "http://s3:9/p" + std::to_string(part);
  }
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://hub:8080/c"}, {"header", header}})}).dump());
  for (int part = 1; part <= 4; ++part) {
    f.transport->push(200, {{"ETag", "e" + std::to_string(part)}});
  }
  f.transport->push(200);
  ASSERT_TRUE(f.client().upload_lfs_files(kernel_repo(), "v1", {file}));
  const auto& requests = f.transport->requests();
  for (int part = 1; part <= 4; ++part) {
    const auto& put = requests[part];
    EXPECT_TRUE(put.body.empty());
    ASSERT_TRUE(put.upload);
    EXPECT_EQ(put.upload->path, "big.so");
    EXPECT_EQ(put.upload->offset, chunk * (part - 1));
    EXPECT_EQ(put.upload->length, std::min<std::uint64_t>(chunk, content.size() - chunk * (part - 1)));
  }
  EXPECT_LE(f.transport->largest_upload_read(), FakeTransport::k_send_buffer);
  std::string sent;
  for (const auto& piece : f.transport->uploads()) {
    sent += piece;
  }
  EXPECT_EQ(sent, content);
}

TEST(HubClientLfs, AFileThatShrankSinceItWasHashedIsNotRetried) {
  LfsFixture f;
  auto file = lfs_file("a.so", "0123456789");
  f.transport->push(200, {}, batch_answer({with_upload(file, {{"href", "http://cdn:9000/put"}})}).dump());
  std::ofstream("a.so", std::ios::binary | std::ios::trunc) << "01234";
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {file});
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message.find("a.so"), std::string::npos) << summary.error().message;
  EXPECT_TRUE(f.sleeps.empty());
}

TEST(HubClientLfs, NoObjectsNoRequest) {
  LfsFixture f;
  auto summary = f.client().upload_lfs_files(kernel_repo(), "v1", {});
  ASSERT_TRUE(summary);
  EXPECT_TRUE(f.transport->requests().empty());
}

}  // namespace
}  // namespace kernelhub::hub
