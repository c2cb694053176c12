// SPDX-License-Identifier: Apache-2.0
// The caching headers of the router's answers (issue 23 §2; cache_policy.hpp), without
// sockets: what answers by commit id, by branch and of private repositories carry, 304s for
// If-None-Match, ranges with If-Range, and the LFS redirect and download URL a shared cache
// can keep (public) or must not (private).
#include <kernelhub/server/hub_router.hpp>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server_test_support.hpp"

namespace kernelhub::server {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Headers = std::vector<std::pair<std::string, std::string>>;

using testing::k_token;
constexpr const char* k_base = "http://127.0.0.1:9";
constexpr const char* k_immutable = "public, max-age=31536000, immutable";
// sha256("hello lfs\n") and base64("hello world") / its git blob id.
constexpr const char* k_lfs_oid =
    "4859402c258b836d02e955d1090e29f586e58b2040504d68afec3d8d43757bba";
constexpr const char* k_hello_base64 = "aGVsbG8gd29ybGQ=";
constexpr const char* k_hello_blob = "95d09f2b10159347eece71399a7e2e907ea3df4f";

class CacheHeadersTest : public ::testing::Test {
 protected:
  CacheHeadersTest() : m_router(make_settings()) {}

  static ServerSettings make_settings() {
    ServerSettings settings;
    settings.root = fs::current_path() / "root";
    settings.tokens = {k_token};
    return settings;
  }

  HttpResponse send(std::string method, std::string target, bool with_token = true,
                    Headers headers = {}, const std::string& body = "",
                    const std::string& body_file = "") {
    HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = body;
    request.body_file = body_file;
    request.base_url = k_base;
    request.headers = std::move(headers);
    if (with_token) {
      request.headers.emplace_back("authorization", std::string("Bearer ") + k_token);
    }
    return m_router.handle(request);
  }

  static std::string header(const HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) {
        return value;
      }
    }
    return "";
  }

  static std::string body_of(const HttpResponse& response) {
    if (response.stream_reader) {
      std::string bytes(response.stream_size, '\0');
      const auto n = response.stream_reader(bytes.data(), bytes.size());
      bytes.resize(n ? *n : 0);
      return bytes;
    }
    if (response.has_stream) {
      return response.stream_data == nullptr
                 ? std::string()
                 : std::string(response.stream_data, response.stream_size);
    }
    return response.body;
  }

  void create(bool is_private) {
    const auto created =
        send("POST", "/api/repos/create", true, {},
             json({{"name", "k"}, {"organization", "org"}, {"type", "kernel"},
                   {"private", is_private}})
                 .dump());
    ASSERT_EQ(created.status, 200) << created.body;
  }

  // Commits one line (a file or an lfsFile) to main; returns the new commit.
  std::string commit(const json& line) {
    const std::string body =
        R"({"key": "header", "value": {"summary": "add"}})"
        "\n" +
        line.dump() + "\n";
    const auto committed = send("POST", "/api/kernels/org/k/commit/main", true, {}, body);
    EXPECT_EQ(committed.status, 200) << committed.body;
    return json::parse(committed.body).value("commitOid", "");
  }

  std::string commit_text(const std::string& path, const std::string& base64) {
    return commit({{"key", "file"},
                   {"value", {{"path", path}, {"content", base64}, {"encoding", "base64"}}}});
  }

  // "hello lfs\n" uploaded through the batch API and committed as build/w.so.
  std::string commit_lfs() {
    const json request = {{"operation", "upload"},
                          {"transfers", {"basic"}},
                          {"objects", {{{"oid", k_lfs_oid}, {"size", 10}}}}};
    const auto batch =
        send("POST", "/kernels/org/k.git/info/lfs/objects/batch", true, {}, request.dump());
    EXPECT_EQ(batch.status, 200) << batch.body;
    const std::string href = json::parse(batch.body)["objects"][0]["actions"]["upload"]["href"];
    const fs::path spooled = fs::current_path() / "spooled";
    std::ofstream(spooled, std::ios::binary) << "hello lfs\n";
    EXPECT_EQ(send("PUT", path_of(href), false, {}, "", spooled.string()).status, 200);
    return commit({{"key", "lfsFile"},
                   {"value", {{"path", "build/w.so"}, {"algo", "sha256"}, {"oid", k_lfs_oid},
                              {"size", 10}}}});
  }

  static std::string path_of(const std::string& url) {
    return url.substr(std::string(k_base).size());
  }

  HubRouter m_router;
};

}  // namespace

TEST_F(CacheHeadersTest, ResolveByCommitIdIsImmutableAndByBranchShortLived) {
  create(false);
  const std::string sha = commit_text("a.txt", k_hello_base64);
  const std::string etag = std::string("\"") + k_hello_blob + "\"";
  for (const char* method : {"GET", "HEAD"}) {
    const auto pinned = send(method, "/kernels/org/k/resolve/" + sha + "/a.txt", false);
    ASSERT_EQ(pinned.status, 200) << method;
    EXPECT_EQ(header(pinned, "ETag"), etag);
    EXPECT_EQ(header(pinned, "Cache-Control"), k_immutable);
    EXPECT_EQ(header(pinned, "Vary"), "");  // the same for every caller
    const auto branch = send(method, "/kernels/org/k/resolve/main/a.txt", false);
    ASSERT_EQ(branch.status, 200);
    EXPECT_EQ(header(branch, "ETag"), etag);
    EXPECT_EQ(header(branch, "Cache-Control"), "public, max-age=5");
    EXPECT_EQ(header(branch, "X-Repo-Commit"), sha);
  }
  // A token changes nothing about a public file's answer.
  EXPECT_EQ(header(send("GET", "/kernels/org/k/resolve/" + sha + "/a.txt"), "Cache-Control"),
            k_immutable);
}

TEST_F(CacheHeadersTest, IfNoneMatchGives304WithTheHeadersAndNoBody) {
  create(false);
  const std::string sha = commit_text("a.txt", k_hello_base64);
  const std::string etag = std::string("\"") + k_hello_blob + "\"";
  const std::string url = "/kernels/org/k/resolve/" + sha + "/a.txt";
  for (const std::string& field : {etag, "\"other\", W/" + etag, std::string("*")}) {
    for (const char* method : {"GET", "HEAD"}) {
      const auto held = send(method, url, false, {{"if-none-match", field}});
      EXPECT_EQ(held.status, 304) << field;
      EXPECT_EQ(header(held, "ETag"), etag);
      EXPECT_EQ(header(held, "Cache-Control"), k_immutable);
      EXPECT_EQ(header(held, "X-Repo-Commit"), sha);
      EXPECT_TRUE(body_of(held).empty());
      EXPECT_EQ(held.stream_size, 0u);
    }
  }
  const auto changed = send("GET", url, false, {{"if-none-match", "\"other\""}});
  EXPECT_EQ(changed.status, 200);
  EXPECT_EQ(body_of(changed), "hello world");
  // A branch that moved to another file: the old tag no longer matches.
  commit_text("a.txt", "Ynll");  // "bye"
  const auto moved = send("GET", "/kernels/org/k/resolve/main/a.txt", false,
                          {{"if-none-match", etag}});
  EXPECT_EQ(moved.status, 200);
  EXPECT_EQ(body_of(moved), "bye");
}

TEST_F(CacheHeadersTest, RangesKeepTheirEtagAndIfRangeFallsBackToTheWholeFile) {
  create(false);
  const std::string sha = commit_text("a.txt", k_hello_base64);
  const std::string etag = std::string("\"") + k_hello_blob + "\"";
  const std::string url = "/kernels/org/k/resolve/" + sha + "/a.txt";
  const auto part = send("GET", url, false, {{"range", "bytes=6-"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(body_of(part), "world");
  EXPECT_EQ(header(part, "ETag"), etag);
  EXPECT_EQ(header(part, "Cache-Control"), k_immutable);
  const auto same = send("GET", url, false, {{"range", "bytes=6-"}, {"if-range", etag}});
  EXPECT_EQ(same.status, 206);
  const auto other = send("GET", url, false, {{"range", "bytes=6-"}, {"if-range", "\"old\""}});
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(body_of(other), "hello world");
}

TEST_F(CacheHeadersTest, PrivateAnswersArePrivateAndTheirRefusalsVaryOnAuthorization) {
  create(true);
  const std::string sha = commit_text("a.txt", k_hello_base64);
  const std::string url = "/kernels/org/k/resolve/" + sha + "/a.txt";
  const auto owner = send("GET", url);
  ASSERT_EQ(owner.status, 200);
  EXPECT_EQ(header(owner, "Cache-Control"), "private, no-cache");
  EXPECT_NE(header(owner, "Vary").find("Authorization"), std::string::npos);
  EXPECT_EQ(header(owner, "ETag"), std::string("\"") + k_hello_blob + "\"");
  const auto revalidated = send("GET", url, true, {{"if-none-match", header(owner, "ETag")}});
  EXPECT_EQ(revalidated.status, 304);
  EXPECT_EQ(header(revalidated, "Cache-Control"), "private, no-cache");
  // Anonymous: the 404 that hides the repository, which no cache may give a token holder,
  // even to a client that names the right ETag.
  for (const Headers& headers : {Headers{}, Headers{{"if-none-match", header(owner, "ETag")}}}) {
    const auto anonymous = send("GET", url, false, headers);
    EXPECT_EQ(anonymous.status, 404);
    EXPECT_EQ(header(anonymous, "Cache-Control").find("public"), std::string::npos);
    EXPECT_NE(header(anonymous, "Vary").find("Authorization"), std::string::npos);
  }
  for (const std::string& api :
       {"/api/kernels/org/k/tree/" + sha, std::string("/api/kernels/org/k")}) {
    const auto listed = send("GET", api);
    EXPECT_EQ(listed.status, 200) << api;
    EXPECT_EQ(header(listed, "Cache-Control"), "private, no-cache") << api;
    EXPECT_EQ(header(listed, "Vary"), "Authorization") << api;
  }
}

TEST_F(CacheHeadersTest, TreesAndInfoAreTaggedWithTheirCommit) {
  create(false);
  const std::string first = commit_text("a.txt", k_hello_base64);
  const auto tree = send("GET", "/api/kernels/org/k/tree/" + first + "?recursive=true", false);
  ASSERT_EQ(tree.status, 200);
  EXPECT_EQ(header(tree, "ETag"), "\"" + first + "\"");
  EXPECT_EQ(header(tree, "Cache-Control"), k_immutable);
  EXPECT_EQ(send("GET", "/api/kernels/org/k/tree/" + first + "?recursive=true", false,
                 {{"if-none-match", "\"" + first + "\""}})
                .status,
            304);
  const auto info = send("GET", "/api/kernels/org/k/revision/" + first, false);
  EXPECT_EQ(header(info, "ETag"), "\"" + first + "\"");
  EXPECT_EQ(header(info, "Cache-Control"), k_immutable);
  const auto branch = send("GET", "/api/kernels/org/k/tree/main", false);
  EXPECT_EQ(header(branch, "Cache-Control"), "public, max-age=5");
  EXPECT_EQ(header(send("GET", "/api/kernels/org/k", false), "Cache-Control"),
            "public, max-age=5");
  const std::string second = commit_text("b.txt", k_hello_base64);
  const auto moved = send("GET", "/api/kernels/org/k/tree/main", false,
                          {{"if-none-match", "\"" + first + "\""}});
  EXPECT_EQ(moved.status, 200);
  EXPECT_EQ(header(moved, "ETag"), "\"" + second + "\"");
  EXPECT_EQ(json::parse(moved.body).size(), 3u);  // .gitattributes, a.txt, b.txt
}

TEST_F(CacheHeadersTest, PublicLfsRedirectAndDownloadAreStableAndImmutable) {
  create(false);
  const std::string sha = commit_lfs();
  const std::string url = "/kernels/org/k/resolve/" + sha + "/build/w.so";
  const auto first = send("HEAD", url, false);
  ASSERT_EQ(first.status, 302);
  EXPECT_EQ(header(first, "Cache-Control"), k_immutable);
  EXPECT_EQ(header(first, "X-Linked-Etag"), std::string("\"") + k_lfs_oid + "\"");
  // One URL for every client and every request (nothing that expires), so a cache keeps it.
  const std::string location = header(first, "Location");
  EXPECT_EQ(header(send("GET", url, false), "Location"), location);
  EXPECT_EQ(header(send("HEAD", url), "Location"), location);
  EXPECT_EQ(location.find("expires="), std::string::npos) << location;
  EXPECT_EQ(header(send("HEAD", "/kernels/org/k/resolve/main/build/w.so", false),
                   "Cache-Control"),
            "public, max-age=5");

  const auto download = send("GET", path_of(location), false);
  ASSERT_EQ(download.status, 200) << download.body;
  EXPECT_EQ(body_of(download), "hello lfs\n");
  EXPECT_EQ(header(download, "ETag"), std::string("\"") + k_lfs_oid + "\"");
  EXPECT_EQ(header(download, "Cache-Control"), k_immutable);
  EXPECT_EQ(header(download, "X-Repo-Commit"), sha);
  const auto held = send("GET", path_of(location), false,
                         {{"if-none-match", std::string("\"") + k_lfs_oid + "\""}});
  EXPECT_EQ(held.status, 304);
  EXPECT_EQ(header(held, "Cache-Control"), k_immutable);
  const auto part = send("GET", path_of(location), false, {{"range", "bytes=6-"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(header(part, "ETag"), std::string("\"") + k_lfs_oid + "\"");
  // The commit it sends back as X-Repo-Commit must be one of the repository's.
  const std::string bare = path_of(location).substr(0, path_of(location).find('?'));
  EXPECT_EQ(send("GET", bare, false).status, 200);
  EXPECT_EQ(send("GET", bare + "?commit=" + std::string(40, 'a'), false).status, 404);
  EXPECT_EQ(send("GET", bare + "?commit=" + sha + "x", false).status, 404);
}

TEST_F(CacheHeadersTest, PrivateLfsRedirectIsNeverStoredAndItsUrlStaysSigned) {
  create(true);
  const std::string sha = commit_lfs();
  const auto redirect = send("HEAD", "/kernels/org/k/resolve/" + sha + "/build/w.so");
  ASSERT_EQ(redirect.status, 302);
  EXPECT_EQ(header(redirect, "Cache-Control"), "private, no-store");
  EXPECT_NE(header(redirect, "Vary").find("Authorization"), std::string::npos);
  const std::string location = path_of(header(redirect, "Location"));
  ASSERT_NE(location.find("signature="), std::string::npos) << location;
  const auto download = send("GET", location, false);
  ASSERT_EQ(download.status, 200) << download.body;
  EXPECT_EQ(header(download, "Cache-Control"), "private, no-cache");
  // Without the signature, or with another, the object is refused, as for a missing repo.
  const std::string bare = location.substr(0, location.find('?'));
  EXPECT_EQ(send("GET", bare, false).status, 403);
  EXPECT_EQ(send("GET", bare + "?commit=" + sha, false).status, 403);
  std::string tampered = location;
  const std::size_t digit = tampered.find("signature=") + 10;
  tampered[digit] = tampered[digit] == '0' ? '1' : '0';
  EXPECT_EQ(send("GET", tampered, false).status, 403);
  EXPECT_EQ(send("GET", std::string("/.kernelhub/lfs/kernels/org/none/") + k_lfs_oid, false).status,
            403);
}

TEST_F(CacheHeadersTest, OtherAnswersAreRevalidatedAndVaryOnCredentials) {
  create(false);
  const auto refs = send("GET", "/api/kernels/org/k/refs", false);
  EXPECT_EQ(header(refs, "Cache-Control"), "no-cache");
  EXPECT_EQ(header(refs, "Vary"), "Authorization");
  EXPECT_EQ(header(send("GET", "/api/kernels/org/k/refs"), "Cache-Control"), "private, no-cache");
  const auto missing = send("GET", "/api/kernels/org/none", false);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(header(missing, "Cache-Control"), "no-cache");
  EXPECT_EQ(header(missing, "Vary"), "Authorization");
  const auto page = send("GET", "/kernels/org/k", false);
  EXPECT_EQ(header(page, "Vary"), "Authorization, Cookie");
}

}  // namespace kernelhub::server
