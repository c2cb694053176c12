// SPDX-License-Identifier: Apache-2.0
// The mirror's decisions without a network: what a URL names, when it asks the upstream (a
// scripted hub::Transport), what it answers when the upstream fails, and lazy LFS fetches.
#include <kernelhub/server/upstream_mirror.hpp>

#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/sha.h>

#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/repository_fetch.hpp>
#include <kernelhub/server/request_target.hpp>

namespace kernelhub::server {

namespace {

namespace fs = std::filesystem;

// Answers requests from a queue and records them (tests/unit/hub/fake_transport.hpp is the hub
// client's; its header brings the hub layer's own KH_HUB_TRY, which clashes with the server's).
class FakeTransport final : public hub::Transport {
 public:
  struct Reply {
    long status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool broken = false;
  };
  void push(long status, std::vector<std::pair<std::string, std::string>> headers = {},
            std::string body = {}) {
    m_replies.push_back(Reply{status, std::move(headers), std::move(body), false});
  }
  void push(Reply reply) { m_replies.push_back(std::move(reply)); }
  static Reply broken() { return Reply{0, {}, {}, true}; }

  tl::expected<hub::HttpResponse, hub::TransportError> perform(
      const hub::HttpRequest& request) override {
    std::lock_guard lock(m_mutex);
    m_requests.push_back(request);
    if (m_replies.empty() || m_replies.front().broken) {
      if (!m_replies.empty()) {
        m_replies.pop_front();
      }
      return tl::unexpected(hub::TransportError{"connection refused", false, true});
    }
    Reply reply = std::move(m_replies.front());
    m_replies.pop_front();
    hub::HttpResponse response;
    response.status = reply.status;
    for (auto& [name, value] : reply.headers) {
      response.headers.add(name, value);
    }
    if (request.sink && reply.status >= 200 && reply.status < 300) {
      request.sink(reply.body);
    } else {
      response.body = reply.body;
    }
    return response;
  }

  const std::vector<hub::HttpRequest>& requests() const { return m_requests; }
  static std::string header(const hub::HttpRequest& request, std::string_view name) {
    for (const auto& [key, value] : request.headers) {
      if (key == name) {
        return value;
      }
    }
    return {};
  }

 private:
  std::mutex m_mutex;
  std::deque<Reply> m_replies;
  std::vector<hub::HttpRequest> m_requests;
};

constexpr const char* k_upstream = "http://127.0.0.1:9";

std::optional<MirrorTarget> target_of(const std::string& method, const std::string& url,
                                      const std::string& body = "") {
  HttpRequest request;
  request.method = method;
  request.target = url;
  request.body = body;
  const auto target = parse_request_target(url);
  EXPECT_TRUE(target) << url;
  return mirror_target(request, target->segments);
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  std::string hex;
  for (unsigned char byte : digest) {
    hex += fmt::format("{:02x}", byte);
  }
  return hex;
}

class UpstreamMirrorTest : public ::testing::Test {
 protected:
  UpstreamMirrorTest()
      : m_transport(std::make_shared<FakeTransport>()),
        m_store(fs::current_path() / "root"),
        m_mirror(m_store, m_transport) {
    m_settings.root = m_store.root();
    m_settings.tokens = {"mirror-token"};
    m_settings.mirror.upstream = k_upstream;
  }

  HubExpected<std::string> prepare(const std::string& method, const std::string& url,
                                   bool with_token = false) {
    HttpRequest request;
    request.method = method;
    request.target = url;
    request.base_url = "http://127.0.0.1:8";
    if (with_token) {
      request.headers.emplace_back("authorization", "Bearer mirror-token");
    }
    const RequestTarget target = *parse_request_target(url);
    handlers::Context ctx{m_settings, m_store, request, target};
    return m_mirror.prepare(ctx);
  }

  RepoId kernel(const std::string& name) { return RepoId{RepoType::kernel, "org", name}; }

  std::shared_ptr<FakeTransport> m_transport;
  ServerSettings m_settings;
  RepositoryStore m_store;
  UpstreamMirror m_mirror;
};

}  // namespace

TEST(MirrorTarget, NamesTheRepositoryTheRevisionAndWhetherTheRequestWrites) {
  auto t = target_of("GET", "/api/kernels/org/relu/revision/v1");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->id.id(), "org/relu");
  EXPECT_EQ(t->id.type, RepoType::kernel);
  EXPECT_EQ(t->revision, "v1");
  EXPECT_FALSE(t->writes);
  t = target_of("GET", "/kernels/org/relu/resolve/abc123/build/x.so");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->revision, "abc123");
  t = target_of("GET", "/api/models/org/m/tree/main/build");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->id.type, RepoType::model);
  EXPECT_EQ(t->revision, "main");
  t = target_of("GET", "/api/kernels/org/relu");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->revision, std::nullopt);
  EXPECT_FALSE(target_of("POST", "/api/kernels/org/relu/paths-info/main")->writes);
  EXPECT_TRUE(target_of("POST", "/api/kernels/org/relu/commit/main")->writes);
  EXPECT_TRUE(target_of("DELETE", "/api/kernels/org/relu/branch/v1")->writes);
  EXPECT_FALSE(target_of("POST", "/kernels/org/relu.git/git-upload-pack")->writes);
  EXPECT_TRUE(target_of("POST", "/kernels/org/relu.git/git-receive-pack")->writes);
  t = target_of("POST", "/kernels/org/relu.git/info/lfs/objects/batch",
                R"({"operation": "download", "objects": []})");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->lfs);
  EXPECT_FALSE(t->writes);
  EXPECT_TRUE(target_of("POST", "/kernels/org/relu.git/info/lfs/objects/batch",
                        R"({"operation": "upload", "objects": []})")->writes);
  // Not a repository: the index, listings, sign-in, the signed downloads, bad ids.
  EXPECT_FALSE(target_of("GET", "/"));
  EXPECT_FALSE(target_of("GET", "/kernels"));
  EXPECT_FALSE(target_of("GET", "/login"));
  EXPECT_FALSE(target_of("GET", "/api/repos/create"));
  EXPECT_FALSE(target_of("GET", "/.kernelhub/lfs/kernels/org/relu/00"));
  EXPECT_FALSE(target_of("GET", "/api/kernels/org/..bad"));
}

TEST_F(UpstreamMirrorTest, AHubThatMirrorsNothingAsksNothing) {
  m_settings.mirror.upstream.clear();
  const auto answer = prepare("GET", "/api/kernels/org/relu");
  ASSERT_TRUE(answer);
  EXPECT_EQ(*answer, "");
  EXPECT_TRUE(m_transport->requests().empty());
}

TEST_F(UpstreamMirrorTest, AMissingRepositoryAndAnUnreachableUpstreamIsA503NamingIt) {
  m_transport->push(FakeTransport::broken());
  const auto answer = prepare("GET", "/api/kernels/org/relu");
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().status, 503);
  EXPECT_NE(answer.error().message.find(k_upstream), std::string::npos) << answer.error().message;
  EXPECT_FALSE(fs::exists(m_store.directory(kernel("relu"))));
  // What the mirror asked: the repository's info, with no token of its own to send.
  ASSERT_EQ(m_transport->requests().size(), 1u);
  EXPECT_EQ(m_transport->requests()[0].url, std::string(k_upstream) + "/api/kernels/org/relu");
  EXPECT_EQ(FakeTransport::header(m_transport->requests()[0], "Authorization"), "");
}

TEST_F(UpstreamMirrorTest, ARepositoryTheUpstreamLacksIsRepoNotFound) {
  m_settings.mirror.token = "upstream-token";
  m_transport->push(404, {{"X-Error-Message", "Repository not found"}});
  const auto answer = prepare("GET", "/kernels/org/relu/resolve/main/README.md");
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().status, 404);
  EXPECT_EQ(answer.error().code, "RepoNotFound");
  EXPECT_EQ(FakeTransport::header(m_transport->requests()[0], "Authorization"),
            "Bearer upstream-token");
}

TEST_F(UpstreamMirrorTest, APrivateUpstreamRepositoryIsNotFetchedForAClientWithoutAToken) {
  m_transport->push(200, {}, R"({"id": "org/relu", "private": true})");
  const auto answer = prepare("GET", "/api/kernels/org/relu");
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().status, 404);
  EXPECT_EQ(m_transport->requests().size(), 1u);  // no clone
  EXPECT_FALSE(fs::exists(m_store.directory(kernel("relu"))));
}

TEST_F(UpstreamMirrorTest, WritesToAMirroredRepositoryAreRefusedAndToALocalOneLetThrough) {
  ASSERT_TRUE(init_mirror_repository(m_store.directory(kernel("mirrored")), k_upstream, false));
  ASSERT_TRUE(m_store.create(kernel("local"), false));
  const auto refused = prepare("POST", "/api/kernels/org/mirrored/commit/main", true);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, 403);
  EXPECT_NE(refused.error().message.find("read-only mirror"), std::string::npos);
  const auto local = prepare("POST", "/api/kernels/org/local/commit/main", true);
  ASSERT_TRUE(local);
  EXPECT_EQ(*local, "");
  EXPECT_TRUE(m_transport->requests().empty());
}

TEST_F(UpstreamMirrorTest, ARefreshThatFailsServesWhatItHasAndSaysSo) {
  ASSERT_TRUE(init_mirror_repository(m_store.directory(kernel("relu")), k_upstream, false));
  m_transport->push(FakeTransport::broken());
  const auto answer = prepare("GET", "/api/kernels/org/relu");
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_TRUE(answer->starts_with("stale; upstream error: ")) << *answer;
  // Within `refresh`, the answer says so again without asking.
  const auto again = prepare("GET", "/api/kernels/org/relu");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *answer);
  EXPECT_EQ(m_transport->requests().size(), 1u);
}

TEST_F(UpstreamMirrorTest, AnLfsObjectIsFetchedOnceCheckedAndStored) {
  const RepoId id = kernel("relu");
  ASSERT_TRUE(init_mirror_repository(m_store.directory(id), k_upstream, false));
  const std::string bytes = "the bytes of a kernel";
  const std::string oid = sha256_hex(bytes);
  const nlohmann::json batch = {
      {"objects",
       {{{"oid", oid},
         {"size", bytes.size()},
         {"actions", {{"download", {{"href", "http://127.0.0.1:9/cdn/object"},
                                    {"header", {{"X-Signed", "yes"}}}}}}}}}}};
  m_transport->push(200, {}, batch.dump());
  m_transport->push(302, {{"Location", "/cdn/moved"}});
  m_transport->push(200, {}, bytes);
  ASSERT_TRUE(m_mirror.fetch_lfs(m_settings.mirror, id, oid, bytes.size()));
  const LfsObjectStore store(m_store.directory(id));
  EXPECT_EQ(store.stored_size(oid), bytes.size());
  ASSERT_EQ(m_transport->requests().size(), 3u);
  EXPECT_EQ(m_transport->requests()[0].url,
            std::string(k_upstream) + "/kernels/org/relu.git/info/lfs/objects/batch");
  EXPECT_EQ(FakeTransport::header(m_transport->requests()[1], "X-Signed"), "yes");
  EXPECT_EQ(m_transport->requests()[2].url, "http://127.0.0.1:9/cdn/moved");
  // Stored: asked again, it asks nothing.
  ASSERT_TRUE(m_mirror.fetch_lfs(m_settings.mirror, id, oid, bytes.size()));
  EXPECT_EQ(m_transport->requests().size(), 3u);
}

TEST_F(UpstreamMirrorTest, AnLfsObjectWithTheWrongBytesIsNotStored) {
  const RepoId id = kernel("relu");
  ASSERT_TRUE(init_mirror_repository(m_store.directory(id), k_upstream, false));
  const std::string oid = sha256_hex("what the pointer names");
  const nlohmann::json batch = {
      {"objects",
       {{{"oid", oid},
         {"size", 22},
         {"actions", {{"download", {{"href", "http://127.0.0.1:9/cdn/object"}}}}}}}}};
  m_transport->push(200, {}, batch.dump());
  m_transport->push(200, {}, "something else entirely");
  const auto fetched = m_mirror.fetch_lfs(m_settings.mirror, id, oid, 22);
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().status, 503);
  EXPECT_FALSE(LfsObjectStore(m_store.directory(id)).stored_size(oid));
}

}  // namespace kernelhub::server
