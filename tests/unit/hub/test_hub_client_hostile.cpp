// SPDX-License-Identifier: Apache-2.0
// The client against a server that means harm (issue 12, items 8 and 9): redirects to other
// schemes, bodies longer than announced, tree pages that loop.
#include <kernelhub/hub/hub_client.hpp>

#include <filesystem>

#include <gtest/gtest.h>

#include <kernelhub/hub/hub_url.hpp>

#include "fake_transport.hpp"

namespace kernelhub::hub {
namespace {

using testing::FakeReply;
using testing::FakeTransport;

const std::string k_commit = std::string(40, 'c');
const std::string k_resolve = "http://hub:8080/kernels/org/relu/resolve/x/a.txt";

using Fixture = testing::FakeHub;

using testing::kernel_repo;

TEST(HubUrl, OnlyHttpAndHttpsAreHttpUrls) {
  EXPECT_TRUE(is_http_url("http://hub:8080/x"));
  EXPECT_TRUE(is_http_url("HTTPS://hub/x"));
  EXPECT_FALSE(is_http_url("gopher://127.0.0.1:70/_x"));
  EXPECT_FALSE(is_http_url("file:///etc/passwd"));
  EXPECT_FALSE(is_http_url("/relative/path"));
  EXPECT_FALSE(is_http_url("httpx://hub/x"));
}

TEST(HubClientHostile, DownloadRefusesARedirectToGopher) {
  Fixture f;
  f.transport->push(302, {{"Location", "gopher://127.0.0.1:7070/_PAYLOAD"}});
  DownloadTask task{kernel_repo(), k_commit, "a.txt", "g.part",
                    FileMetadata{k_commit, std::string(40, 'a'), 5, k_resolve}};
  auto result = f.client().download(task);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(result.error().message.find("gopher://127.0.0.1:7070/_PAYLOAD"), std::string::npos)
      << result.error().message;
  // The redirect itself was never requested.
  EXPECT_EQ(f.transport->requests().size(), 1u);
}

TEST(HubClientHostile, MetadataRefusesAnAbsoluteRedirectToAFile) {
  Fixture f;
  f.transport->push(302, {{"Location", "file:///etc/passwd"},
                          {"X-Linked-Etag", "\"" + std::string(64, 'e') + "\""},
                          {"X-Linked-Size", "12"},
                          {"X-Repo-Commit", k_commit}});
  auto metadata = f.client().file_metadata(kernel_repo(), "main", "a.txt");
  ASSERT_FALSE(metadata);
  EXPECT_EQ(metadata.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(metadata.error().message.find("file:///etc/passwd"), std::string::npos);
}

TEST(HubClientHostile, TreeRefusesANextPageOfAnotherScheme) {
  Fixture f;
  f.transport->push(200, {{"Link", R"(<file:///etc/passwd>; rel="next")"}}, "[]");
  auto tree = f.client().list_tree(kernel_repo(), k_commit, {}, Recursive::yes);
  ASSERT_FALSE(tree);
  EXPECT_NE(tree.error().message.find("file:///etc/passwd"), std::string::npos);
  EXPECT_EQ(f.transport->requests().size(), 1u);
}

TEST(HubClientHostile, TreeStopsAtARepeatedNextPage) {
  Fixture f;
  const std::string self = "http://hub:8080/api/kernels/org/relu/tree/x?cursor=1";
  for (int i = 0; i < 4; ++i) {
    f.transport->push(200, {{"Link", "<" + self + R"(>; rel="next")"}}, "[]");
  }
  auto tree = f.client().list_tree(kernel_repo(), k_commit, {}, Recursive::yes);
  ASSERT_FALSE(tree);
  EXPECT_EQ(tree.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(tree.error().message.find("repeats"), std::string::npos) << tree.error().message;
  // The first page, then the self-linked one once; its second visit is never made.
  EXPECT_EQ(f.transport->requests().size(), 2u);
}

TEST(HubClientHostile, TreeStopsAfterTenThousandPages) {
  // Every page names a new one: no URL repeats, so only the page count can end the walk.
  Fixture f;
  for (int i = 1; i <= 10001; ++i) {
    const auto next = "http://hub:8080/api/kernels/org/relu/tree/x?cursor=" + std::to_string(i);
    f.transport->push(200, {{"Link", "<" + next + R"(>; rel="next")"}}, "[]");
  }
  auto tree = f.client().list_tree(kernel_repo(), k_commit, {}, Recursive::yes);
  ASSERT_FALSE(tree);
  EXPECT_NE(tree.error().message.find("more than 10000 pages"), std::string::npos)
      << tree.error().message;
  EXPECT_EQ(f.transport->requests().size(), 10000u);
}

TEST(HubClientHostile, TreeRefusesAPathLongerThanPathMaxAndAsksForNoMorePages) {
  // Issue 20 item 5: entries of 30,000-byte paths, page after page, grew the client by 33 MB a
  // page; now the first such path ends the listing.
  Fixture f;
  std::string page = R"([{"type":"file","oid":"o","size":1,"path":"build/torch-cpu/a.py"})";
  for (int i = 0; i < 3; ++i) {
    page += R"(,{"type":"file","oid":"o","size":1,"path":")" + std::string(30000, 'p') + R"("})";
  }
  page += "]";
  for (int i = 1; i <= 3; ++i) {
    const auto next = "http://hub:8080/api/kernels/org/relu/tree/x?cursor=" + std::to_string(i);
    f.transport->push(200, {{"Link", "<" + next + R"(>; rel="next")"}}, page);
  }
  auto tree = f.client().list_tree(kernel_repo(), k_commit, {}, Recursive::yes);
  ASSERT_FALSE(tree);
  EXPECT_EQ(tree.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(tree.error().message.find("entry 2 has a path of 30000 bytes, over the limit of 4096"),
            std::string::npos)
      << tree.error().message;
  EXPECT_EQ(f.transport->requests().size(), 1u);
}

TEST(HubClientHostile, DownloadStopsWritingAtTheAnnouncedSize) {
  Fixture f;
  FakeReply reply;
  reply.body = std::string(4096, 'x');
  reply.chunk_size = 16;
  f.transport->push(reply);
  const std::filesystem::path partial = "over.part";
  DownloadTask task{kernel_repo(), k_commit, "a.txt", partial,
                    FileMetadata{k_commit, std::string(40, 'a'), 32, k_resolve}};
  auto result = f.client().download(task);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::checksum);
  EXPECT_NE(result.error().message.find("more than the 32 bytes"), std::string::npos)
      << result.error().message;
  EXPECT_LE(f.transport->sunk_bytes(), 32u);
  EXPECT_FALSE(std::filesystem::exists(partial));
}

TEST(HubClientHostile, ResumedDownloadStopsAtTheAnnouncedSizeToo) {
  Fixture f;
  std::filesystem::remove("resume.part");
  {
    std::FILE* out = std::fopen("resume.part", "wb");
    ASSERT_NE(out, nullptr);
    std::fputs("0123456789", out);
    std::fclose(out);
  }
  FakeReply reply;
  reply.status = 206;
  reply.headers = {{"Content-Range", "bytes 10-19/20"}};
  reply.body = std::string(100, 'y');
  reply.chunk_size = 5;
  f.transport->push(reply);
  DownloadTask task{kernel_repo(), k_commit, "a.txt", "resume.part",
                    FileMetadata{k_commit, std::string(40, 'a'), 20, k_resolve}};
  auto result = f.client().download(task);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::checksum);
  EXPECT_LE(f.transport->sunk_bytes(), 10u);
  EXPECT_FALSE(std::filesystem::exists("resume.part"));
}

}  // namespace
}  // namespace kernelhub::hub
