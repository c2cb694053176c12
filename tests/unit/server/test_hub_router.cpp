// SPDX-License-Identifier: Apache-2.0
// The router over a real RepositoryStore in the test's temp dir, without sockets: the Hub
// endpoints' status codes, headers and bodies, and that refused writes change nothing.
#include <kernelhub/server/hub_router.hpp>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <kernelhub/verify/signing_key.hpp>
#include <nlohmann/json.hpp>

#include "server_test_support.hpp"

namespace kernelhub::server {

namespace {

using nlohmann::json;

using testing::k_token;

class HubRouterTest : public ::testing::Test {
 protected:
  HubRouterTest() : m_router(make_settings()) {}

  static ServerSettings make_settings() {
    ServerSettings settings;
    settings.root = std::filesystem::current_path() / "root";
    settings.tokens = {k_token};
    settings.organizations["org"].trusted_kernel_publisher = true;
    return settings;
  }

  HttpResponse send(std::string method, std::string target, const std::string& body = "",
                    bool with_token = true, std::vector<std::pair<std::string, std::string>>
                                                extra_headers = {}) {
    HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = body;
    request.base_url = "http://127.0.0.1:9";
    request.headers = std::move(extra_headers);
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

  static std::string streamed(const HttpResponse& response) {
    return std::string(response.stream_data, response.stream_size);
  }

  void create_kernel() {
    const auto response =
        send("POST", "/api/repos/create", R"({"name": "k", "organization": "org", "type": "kernel"})");
    ASSERT_EQ(response.status, 200) << response.body;
  }

  HttpResponse commit_file(const std::string& revision, const std::string& path,
                           const std::string& base64, bool with_token = true) {
    const std::string body =
        R"({"key": "header", "value": {"summary": "add"}})"
        "\n" +
        json({{"key", "file"}, {"value", {{"path", path}, {"content", base64}, {"encoding", "base64"}}}})
            .dump() +
        "\n";
    return send("POST", "/api/kernels/org/k/commit/" + revision, body, with_token);
  }

  std::string refs() { return send("GET", "/api/kernels/org/k/refs").body; }

  HubRouter m_router;
};

}  // namespace

TEST_F(HubRouterTest, CreateAnswersUrlAndConflictStillCarriesIt) {
  create_kernel();
  const auto again =
      send("POST", "/api/repos/create", R"({"name": "k", "organization": "org", "type": "kernel"})");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(json::parse(again.body)["url"], "http://127.0.0.1:9/kernels/org/k");
  const auto info = json::parse(send("GET", "/api/kernels/org/k").body);
  EXPECT_EQ(info["id"], "org/k");
  EXPECT_EQ(info["sha"].get<std::string>().size(), 40u);
  EXPECT_EQ(info["siblings"], json::array({{{"rfilename", ".gitattributes"}}}));
}

TEST_F(HubRouterTest, CommitThenResolveWithEtagCommitAndRanges) {
  create_kernel();
  const auto committed = commit_file("main", "dir/a b.txt", "aGVsbG8gd29ybGQ=");
  ASSERT_EQ(committed.status, 200) << committed.body;
  const std::string sha = json::parse(committed.body)["commitOid"];
  EXPECT_EQ(json::parse(committed.body)["commitUrl"],
            "http://127.0.0.1:9/kernels/org/k/commit/" + sha);

  const auto got = send("GET", "/kernels/org/k/resolve/main/dir/a%20b.txt");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(streamed(got), "hello world");
  // git's blob id of "hello world": sha1("blob 11\0hello world").
  EXPECT_EQ(header(got, "ETag"), "\"95d09f2b10159347eece71399a7e2e907ea3df4f\"");
  EXPECT_EQ(header(got, "X-Repo-Commit"), sha);

  const auto head = send("HEAD", "/kernels/org/k/resolve/" + sha + "/dir/a%20b.txt");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.stream_size, 11u);

  const auto part = send("GET", "/kernels/org/k/resolve/main/dir/a%20b.txt", "", true,
                         {{"range", "bytes=6-"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(streamed(part), "world");
  EXPECT_EQ(header(part, "Content-Range"), "bytes 6-10/11");

  const auto missing = send("HEAD", "/kernels/org/k/resolve/main/nope.txt");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(header(missing, "X-Error-Code"), "EntryNotFound");
  EXPECT_EQ(header(missing, "X-Repo-Commit"), sha);
}

TEST_F(HubRouterTest, BranchesWithSlashesTagsAndHistoricalShas) {
  create_kernel();
  const std::string first = json::parse(commit_file("main", "f.txt", "MQ==").body)["commitOid"];
  ASSERT_EQ(send("POST", "/api/kernels/org/k/branch/dev%2F1", "{}").status, 200);
  EXPECT_EQ(send("POST", "/api/kernels/org/k/branch/dev%2F1", "{}").status, 409);
  ASSERT_EQ(commit_file("dev%2F1", "f.txt", "Mg==").status, 200);
  ASSERT_EQ(send("POST", "/api/kernels/org/k/tag/dev%2F1", R"({"tag": "v1.0"})").status, 200);

  EXPECT_EQ(streamed(send("GET", "/kernels/org/k/resolve/dev%2F1/f.txt")), "2");
  EXPECT_EQ(streamed(send("GET", "/kernels/org/k/resolve/v1.0/f.txt")), "2");
  EXPECT_EQ(streamed(send("GET", "/kernels/org/k/resolve/refs%2Fheads%2Fmain/f.txt")), "1");
  EXPECT_EQ(streamed(send("GET", "/kernels/org/k/resolve/" + first + "/f.txt")), "1");

  const auto listed = json::parse(refs());
  EXPECT_EQ(listed["branches"].size(), 2u);
  EXPECT_EQ(listed["tags"][0]["name"], "v1.0");
  EXPECT_EQ(listed["converts"], json::array());

  const auto unknown = send("GET", "/api/kernels/org/k/revision/nope");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(header(unknown, "X-Error-Code"), "RevisionNotFound");
}

TEST_F(HubRouterTest, TreeListsFoldersAndRecursiveFiles) {
  create_kernel();
  ASSERT_EQ(commit_file("main", "build/torch-cpu/m.py", "eA==").status, 200);
  const auto top = json::parse(send("GET", "/api/kernels/org/k/tree/main/build").body);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0]["type"], "directory");
  EXPECT_EQ(top[0]["path"], "build/torch-cpu");
  const auto all = json::parse(send("GET", "/api/kernels/org/k/tree/main?recursive=true").body);
  EXPECT_EQ(all.size(), 4u);  // .gitattributes, build, build/torch-cpu, the file
  const auto missing = send("GET", "/api/kernels/org/k/tree/main/nope");
  EXPECT_EQ(header(missing, "X-Error-Code"), "EntryNotFound");
}

TEST_F(HubRouterTest, RefusedWritesChangeNothing) {
  create_kernel();
  const std::string before = refs();
  EXPECT_EQ(commit_file("main", "a.txt", "YQ==", /*with_token=*/false).status, 401);
  HttpRequest wrong;
  wrong.method = "POST";
  wrong.target = "/api/kernels/org/k/commit/main";
  wrong.headers = {{"authorization", "Bearer nope"}};
  const auto wrong_token = m_router.handle(wrong);
  EXPECT_EQ(wrong_token.status, 401);
  EXPECT_EQ(header(wrong_token, "X-Error-Message"), "Invalid credentials in Authorization header");
  EXPECT_EQ(commit_file("main", "../a.txt", "YQ==").status, 400);
  EXPECT_EQ(commit_file("main", ".git/config", "YQ==").status, 400);
  EXPECT_EQ(commit_file("main", "a.txt", "not base64!").status, 400);
  EXPECT_EQ(commit_file("nobranch", "a.txt", "YQ==").status, 404);
  EXPECT_EQ(send("POST", "/api/kernels/org/k/commit/main", "{garbage").status, 400);
  const auto stale = send("POST", "/api/kernels/org/k/commit/main",
                          R"({"key": "header", "value": {"summary": "s", "parentCommit": "0000000000"}})");
  EXPECT_EQ(stale.status, 412);
  EXPECT_EQ(send("POST", "/api/kernels/org/k/commit/main",
                 R"({"key": "header", "value": {"summary": "s"}})"
                 "\n"
                 R"({"key": "deletedFile", "value": {"path": "absent.txt"}})")
                .status,
            404);
  EXPECT_EQ(refs(), before);
}

TEST_F(HubRouterTest, TraversalInIdsAndRevisionsIsRefused) {
  create_kernel();
  EXPECT_EQ(send("GET", "/api/kernels/org/..%2F..%2Fetc").status, 400);
  EXPECT_EQ(send("GET", "/kernels/org/k/resolve/..%2F..%2Fconfig/x").status, 400);
  EXPECT_EQ(send("GET", "/kernels/org/k/resolve/main/..%2F..%2Fconfig").status, 400);
  EXPECT_EQ(send("GET", "/kernels/org/k/resolve/main/a/../../config").status, 400);
  EXPECT_EQ(send("POST", "/api/repos/create", R"({"name": "..", "organization": "org"})").status,
            400);
  EXPECT_EQ(send("GET", "/api/nothing/here").status, 404);
}

TEST_F(HubRouterTest, PreuploadAnswersRegularWithTheCurrentOid) {
  create_kernel();
  ASSERT_EQ(commit_file("main", "a.txt", "aGVsbG8gd29ybGQ=").status, 200);
  const auto answer = json::parse(
      send("POST", "/api/kernels/org/k/preupload/main",
           R"({"files": [{"path": "a.txt", "size": 11, "sample": ""}, {"path": "b.txt", "size": 1, "sample": ""}]})")
          .body);
  EXPECT_EQ(answer["files"][0]["uploadMode"], "regular");
  EXPECT_EQ(answer["files"][0]["shouldIgnore"], false);
  EXPECT_EQ(answer["files"][0]["oid"], "95d09f2b10159347eece71399a7e2e907ea3df4f");
  EXPECT_TRUE(answer["files"][1]["oid"].is_null());
}

TEST_F(HubRouterTest, OrganizationOverviewAndIndexPage) {
  create_kernel();
  ASSERT_EQ(send("POST", "/api/kernels/org/k/branch/v1", "{}").status, 200);
  ASSERT_EQ(commit_file("v1", "build/torch-cpu/m.py", "eA==").status, 200);
  const auto overview = json::parse(send("GET", "/api/organizations/org/overview").body);
  EXPECT_EQ(overview["trustedKernelPublisher"], true);
  EXPECT_EQ(send("GET", "/api/organizations/stranger/overview").status, 404);
  const auto page = send("GET", "/");
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find(">org/k</a>"), std::string::npos);
  // The newest version, linked, and the backend of its torch-cpu variant.
  EXPECT_NE(page.body.find("<a href=\"/kernels/org/k/tree/v1\">v1</a>"), std::string::npos);
  EXPECT_NE(page.body.find("<span class=\"chip\">cpu</span>"), std::string::npos);
}

TEST_F(HubRouterTest, PrivateReposAreHiddenFromCallersWithoutAToken) {
  ASSERT_EQ(send("POST", "/api/repos/create",
                 R"({"name": "secret", "organization": "org", "visibility": "private"})")
                .status,
            200);
  EXPECT_EQ(send("GET", "/api/models/org/secret").status, 200);
  // Issue 12 item 6: a private repository answers exactly as a missing one (404, not 401).
  const auto hidden = send("GET", "/api/models/org/secret", "", /*with_token=*/false);
  const auto missing = send("GET", "/api/models/org/nothing", "", /*with_token=*/false);
  EXPECT_EQ(hidden.status, 404);
  EXPECT_EQ(header(hidden, "X-Error-Code"), "RepoNotFound");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(header(missing, "X-Error-Code"), "RepoNotFound");
  EXPECT_EQ(send("HEAD", "/org/secret/resolve/main/.gitattributes", "", false).status, 404);
  EXPECT_EQ(send("GET", "/api/models/org/secret/refs", "", false).status, 404);
  EXPECT_EQ(send("GET", "/api/models/org/secret/tree/main", "", false).status, 404);
}

TEST_F(HubRouterTest, IndexPageListsPrivateKernelsOnlyToTokenHolders) {
  create_kernel();
  ASSERT_EQ(send("POST", "/api/repos/create",
                 R"({"name": "hidden-k", "organization": "org", "type": "kernel", "private": true})")
                .status,
            200);
  const auto anonymous = send("GET", "/", "", /*with_token=*/false);
  ASSERT_EQ(anonymous.status, 200);
  EXPECT_NE(anonymous.body.find("org/k"), std::string::npos);
  EXPECT_EQ(anonymous.body.find("hidden-k"), std::string::npos) << anonymous.body;
  EXPECT_NE(send("GET", "/").body.find("org/hidden-k"), std::string::npos);
}

TEST_F(HubRouterTest, RefNamesGitAndTheHubRefuseAreRefused) {
  create_kernel();
  const std::string before = refs();
  // Issue 12 item 5: each of these used to be created (or gave a 500 for a tag "-x").
  for (const std::string name : {"HEAD", "refs%2Fheads%2Fz", "-x", "%40", "a..b", "x.lock"}) {
    const auto branch = send("POST", "/api/kernels/org/k/branch/" + name, "{}");
    EXPECT_EQ(branch.status, 400) << name << ": " << branch.body;
  }
  for (const std::string tag : {"HEAD", "refs/tags/t", "-x", "@", "a b"}) {
    const auto tagged =
        send("POST", "/api/kernels/org/k/tag/main", json({{"tag", tag}}).dump());
    EXPECT_EQ(tagged.status, 400) << tag << ": " << tagged.body;
  }
  EXPECT_EQ(refs(), before);
  EXPECT_EQ(send("POST", "/api/kernels/org/k/branch/feature%2Fok", "{}").status, 200);
  EXPECT_EQ(send("POST", "/api/kernels/org/k/tag/main", R"({"tag": "v1.0-rc"})").status, 200);
}

TEST_F(HubRouterTest, FileNamesWithBackslashesAreRefused) {
  create_kernel();
  const std::string before = refs();
  for (const std::string path : {"notes\\readme.txt", "..\\..\\x", "a\\"}) {
    const auto response = commit_file("main", path, "YQ==");
    EXPECT_EQ(response.status, 400) << path;
    EXPECT_NE(header(response, "X-Error-Message").find("backslash"), std::string::npos);
  }
  EXPECT_EQ(refs(), before);
}

TEST_F(HubRouterTest, LaxBase64IsRefusedNamingTheFile) {
  create_kernel();
  const std::string before = refs();
  // Issue 12 item 4: "====" was a 500, "A===" an empty file, "QQ==QUJD" "A\0\0ABC".
  for (const std::string content : {"====", "A===", "QQ==QUJD", "QR==", "YQ= =", "YQ==\n"}) {
    const auto response = commit_file("main", "weights.bin", content);
    EXPECT_EQ(response.status, 400) << content << ": " << response.body;
    EXPECT_NE(header(response, "X-Error-Message").find("weights.bin"), std::string::npos);
  }
  EXPECT_EQ(refs(), before);
}

TEST_F(HubRouterTest, TreeCursorMustBeANonNegativeInteger) {
  create_kernel();
  for (const std::string cursor : {"-1", "", "1x", "+1", "99999999999999999999999"}) {
    EXPECT_EQ(send("GET", "/api/kernels/org/k/tree/main?cursor=" + cursor).status, 400)
        << cursor;
  }
  EXPECT_EQ(json::parse(send("GET", "/api/kernels/org/k/tree/main?cursor=1").body),
            json::array());
}

TEST_F(HubRouterTest, ConfigTomlIsReadAgainWhenItChanges) {
  const auto root = std::filesystem::current_path() / "root";
  std::filesystem::create_directories(root);
  EXPECT_EQ(m_router.reload(HubRouter::Reload::if_changed), false);
  {
    std::ofstream config(root / "config.toml");
    config << "[organizations.newcomer]\ntrustedKernelPublisher = true\n";
  }
  const auto reloaded = m_router.reload(HubRouter::Reload::if_changed);
  ASSERT_TRUE(reloaded) << reloaded.error().message;
  EXPECT_TRUE(*reloaded);
  const auto overview = send("GET", "/api/organizations/newcomer/overview");
  ASSERT_EQ(overview.status, 200) << overview.body;
  EXPECT_EQ(json::parse(overview.body)["trustedKernelPublisher"], true);
  EXPECT_EQ(m_router.reload(HubRouter::Reload::if_changed), false);

  // A broken file keeps the settings in force.
  {
    std::ofstream config(root / "config.toml");
    config << "[organizations.newcomer\n";
  }
  EXPECT_FALSE(m_router.reload(HubRouter::Reload::always));
  EXPECT_EQ(json::parse(send("GET", "/api/organizations/newcomer/overview").body)
                ["trustedKernelPublisher"],
            true);
}

TEST_F(HubRouterTest, TrustedKeysArePublishedAndFollowConfigToml) {
  const auto empty = send("GET", "/api/kernelhub/trusted-keys", "", /*with_token=*/false);
  ASSERT_EQ(empty.status, 200);
  EXPECT_EQ(json::parse(empty.body)["keys"], json::array());
  EXPECT_EQ(send("POST", "/api/kernelhub/trusted-keys").status, 405);

  const auto root = std::filesystem::current_path() / "root";
  std::filesystem::create_directories(root);
  const auto key = *verify::generate_signing_key(verify::KeyAlgorithm::ecdsa_p256);
  std::ofstream(root / "team.pub") << key.public_pem();
  std::ofstream(root / "config.toml") << "[signing]\ntrusted-keys = [\"team.pub\"]\n";
  ASSERT_TRUE(m_router.reload(HubRouter::Reload::always));
  const auto published = json::parse(send("GET", "/api/kernelhub/trusted-keys").body)["keys"];
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published[0]["hint"], key.hint());
  EXPECT_EQ(published[0]["algorithm"], "ECDSA P-256");
  EXPECT_EQ(published[0]["pem"], key.public_pem());
}

TEST_F(HubRouterTest, LeftoversOfAKilledRunAreRemoved) {
  create_kernel();
  const auto repo = std::filesystem::current_path() / "root" / "kernels" / "org";
  std::ofstream(repo / "k.git" / "objects" / "tmp_object_git2_a1b2c3") << std::string(1000, 'x');
  std::filesystem::create_directories(repo / ".tmp-half-0001" / "objects");
  std::ofstream(repo / "k.git" / "objects" / "keep-me") << "x";
  const auto removed = m_router.store().remove_leftovers();
  EXPECT_EQ(removed.count, 2u);
  EXPECT_EQ(removed.bytes, 1000u);
  EXPECT_FALSE(std::filesystem::exists(repo / "k.git" / "objects" / "tmp_object_git2_a1b2c3"));
  EXPECT_FALSE(std::filesystem::exists(repo / ".tmp-half-0001"));
  EXPECT_TRUE(std::filesystem::exists(repo / "k.git" / "objects" / "keep-me"));
  EXPECT_EQ(send("GET", "/api/kernels/org/k").status, 200);
}

TEST(HubRouterReadOnly, WritesAreRefusedWithoutATokenFile) {
  ServerSettings settings;
  settings.root = std::filesystem::current_path() / "root";
  HubRouter router(settings);
  HttpRequest request;
  request.method = "POST";
  request.target = "/api/repos/create";
  request.body = R"({"name": "k", "organization": "org"})";
  request.headers = {{"authorization", "Bearer anything"}};
  const auto response = router.handle(request);
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(response.body.find("--token-file"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(settings.root / "models"));
}

TEST_F(HubRouterTest, ModelUrlsFallBackToTheKernelOfTheSameName) {
  create_kernel();
  ASSERT_EQ(commit_file("main", "f.txt", "MQ==").status, 200);
  EXPECT_EQ(streamed(send("GET", "/org/k/resolve/main/f.txt")), "1");
  EXPECT_EQ(send("GET", "/api/datasets/org/k").status, 404);
}

TEST_F(HubRouterTest, AdmitDecidesFromTheHeadAlone) {
  const auto head = [](std::string method, std::string target, bool with_token) {
    HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    if (with_token) {
      request.headers.emplace_back("authorization", std::string("Bearer ") + k_token);
    }
    return request;
  };
  // Writes without a valid token are refused before any body byte (issue 12 item 1).
  const auto anonymous = m_router.admit(head("POST", "/api/kernels/org/k/commit/main", false));
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().status, 401);
  EXPECT_FALSE(m_router.admit(head("DELETE", "/api/kernels/org/k/branch/x", false)));
  EXPECT_FALSE(m_router.admit(head("POST", "/no/such/route", false)));
  // A commit may be large and goes to a file; other bodies stay small and in memory.
  const auto commit = m_router.admit(head("POST", "/api/kernels/org/k/commit/main", true));
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->storage, HubRouter::BodyPlan::Storage::file);
  EXPECT_EQ(commit->limit, m_router.settings()->max_body_bytes);
  const auto create = m_router.admit(head("POST", "/api/repos/create", true));
  ASSERT_TRUE(create);
  EXPECT_EQ(create->storage, HubRouter::BodyPlan::Storage::memory);
  EXPECT_LE(create->limit, 16u << 20);
  // Reads and validate-yaml need no token, and may send only small bodies.
  const auto read = m_router.admit(head("GET", "/api/kernels/org/k", false));
  ASSERT_TRUE(read);
  EXPECT_LE(read->limit, 64u << 10);
  const auto yaml = m_router.admit(head("POST", "/api/validate-yaml", false));
  ASSERT_TRUE(yaml);
  EXPECT_LE(yaml->limit, 256u << 10);
  // paths-info is a read sent as a POST: no token, a small body in memory.
  const auto paths = m_router.admit(head("POST", "/api/kernels/org/k/paths-info/main", false));
  ASSERT_TRUE(paths);
  EXPECT_EQ(paths->storage, HubRouter::BodyPlan::Storage::memory);
  EXPECT_LE(paths->limit, 1u << 20);
  // Discussion writes are writes.
  const auto talk = m_router.admit(head("POST", "/api/kernels/org/k/discussions", false));
  ASSERT_FALSE(talk);
  EXPECT_EQ(talk.error().status, 401);
  EXPECT_FALSE(m_router.admit(head("POST", "/api/kernels/org/k/discussions/1/merge", false)));
}

TEST_F(HubRouterTest, CreatePrCommitOpensARefThatMergesIntoItsBranch) {
  create_kernel();
  ASSERT_EQ(commit_file("main", "a.txt", "YQ==").status, 200);
  const std::string body = R"({"key": "header", "value": {"summary": "add b"}})"
                           "\n"
                           R"({"key": "file", "value": {"path": "b.txt", "content": "Yg=="}})"
                           "\n";
  // Before issue 15 this was a 400 "pull requests are not supported".
  const auto opened = send("POST", "/api/kernels/org/k/commit/main?create_pr=1", body);
  ASSERT_EQ(opened.status, 200) << opened.body;
  const json answer = json::parse(opened.body);
  EXPECT_EQ(answer["pullRequestUrl"], "http://127.0.0.1:9/kernels/org/k/discussions/1");
  const auto on_pr = send("GET", "/kernels/org/k/resolve/refs%2Fpr%2F1/b.txt");
  ASSERT_EQ(on_pr.status, 200);
  EXPECT_EQ(streamed(on_pr), "b");
  EXPECT_EQ(header(on_pr, "X-Repo-Commit"), answer["commitOid"]);
  EXPECT_EQ(send("GET", "/kernels/org/k/resolve/main/b.txt").status, 404);
  const json listed = json::parse(send("GET", "/api/kernels/org/k/discussions", "", false).body);
  EXPECT_EQ(listed["count"], 1);
  EXPECT_EQ(listed["discussions"][0]["isPullRequest"], true);
  EXPECT_EQ(listed["discussions"][0]["repo"], json({{"name", "org/k"}, {"type", "kernel"}}));
  // Merging needs the token; with it, main gets the file.
  EXPECT_EQ(send("POST", "/api/kernels/org/k/discussions/1/merge", "", false).status, 401);
  const auto merged = send("POST", "/api/kernels/org/k/discussions/1/merge", "");
  ASSERT_EQ(merged.status, 200) << merged.body;
  const auto on_main = send("GET", "/kernels/org/k/resolve/main/b.txt");
  ASSERT_EQ(on_main.status, 200);
  EXPECT_EQ(streamed(on_main), "b");
  const json details = json::parse(send("GET", "/api/kernels/org/k/discussions/1").body);
  EXPECT_EQ(details["status"], "merged");
  EXPECT_EQ(details["changes"]["base"], "refs/heads/main");
  EXPECT_EQ(details["changes"]["mergeCommitId"], header(on_main, "X-Repo-Commit"));
  // A merged PR takes no more commits; a PR that does not exist is no revision.
  EXPECT_EQ(send("POST", "/api/kernels/org/k/commit/refs%2Fpr%2F1", body).status, 400);
  EXPECT_EQ(send("POST", "/api/kernels/org/k/commit/refs%2Fpr%2F9", body).status, 404);
}

}  // namespace kernelhub::server

namespace kernelhub::server {

namespace {

HttpRequest request_from(std::string method, std::string target, std::string_view token,
                         std::string peer = "127.0.0.9") {
  HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.base_url = "http://127.0.0.1:9";
  request.peer = std::move(peer);
  if (!token.empty()) {
    request.headers.emplace_back("authorization", "Bearer " + std::string(token));
  }
  return request;
}

// What the transport does: admit, then handle.
HttpResponse serve_one(HubRouter& router, const HttpRequest& request) {
  const auto plan = router.admit(request);
  return plan ? router.handle(request) : error_response(plan.error());
}

}  // namespace

// Issue 20 item 4.
TEST_F(HubRouterTest, EmptyingOrDeletingTheTokenFileRevokesEveryToken) {
  const auto file = std::filesystem::current_path() / "tokens";
  std::ofstream(file) << k_token << "\n";
  ServerSettings settings = make_settings();
  settings.token_file = file;
  HubRouter router(settings);
  const auto create = request_from("POST", "/api/repos/create", k_token);
  HttpRequest private_create = create;
  const std::string body = R"({"name": "s", "organization": "org", "private": true})";
  private_create.body = body;
  ASSERT_EQ(router.handle(private_create).status, 200);
  const auto read = request_from("GET", "/api/models/org/s", k_token);
  ASSERT_EQ(router.handle(read).status, 200);
  for (const std::string content : {"", "# nobody\n\n"}) {
    std::ofstream(file) << content;
    ASSERT_TRUE(router.reload(HubRouter::Reload::always));
    EXPECT_EQ(router.handle(read).status, 404) << content;
    EXPECT_EQ(router.handle(private_create).status, 403) << content;
    std::ofstream(file) << k_token << "\n";
    ASSERT_TRUE(router.reload(HubRouter::Reload::always));
    EXPECT_EQ(router.handle(read).status, 200);
  }
  std::filesystem::remove(file);
  ASSERT_TRUE(router.reload(HubRouter::Reload::always));
  EXPECT_EQ(router.handle(read).status, 404);
  // A file that is there but is no list of tokens keeps the previous ones, and says so.
  std::ofstream(file) << k_token << "\n";
  ASSERT_TRUE(router.reload(HubRouter::Reload::always));
  std::ofstream(file) << "two tokens\n";
  const auto damaged = router.reload(HubRouter::Reload::always);
  ASSERT_FALSE(damaged);
  EXPECT_NE(damaged.error().message.find("the 1 token(s) read before stay valid"),
            std::string::npos)
      << damaged.error().message;
  EXPECT_EQ(router.handle(read).status, 200);
}

// Issue 20 item 7: bearer tokens are throttled per address, as sign-ins are.
TEST_F(HubRouterTest, WrongBearerTokensGetTheirAddressThrottled) {
  ASSERT_EQ(send("POST", "/api/repos/create",
                 R"({"name": "secret", "organization": "org", "private": true})")
                .status,
            200);
  for (int guess = 0; guess < 5; ++guess) {
    EXPECT_EQ(serve_one(m_router, request_from("GET", "/api/models/org/secret", "guess")).status,
              404);
  }
  // The right token is not even looked at now: writes 429 before their body, private
  // repositories hidden as from anyone, public reads served as anonymous ones.
  const auto write = m_router.admit(request_from("POST", "/api/repos/create", k_token));
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().status, 429);
  EXPECT_EQ(m_router.handle(request_from("POST", "/api/repos/create", k_token)).status, 429);
  EXPECT_EQ(serve_one(m_router, request_from("GET", "/api/models/org/secret", k_token)).status,
            404);
  EXPECT_EQ(serve_one(m_router, request_from("GET", "/api/organizations/org/overview", k_token))
                .status,
            200);
  // Another address is not concerned.
  EXPECT_EQ(
      serve_one(m_router, request_from("GET", "/api/models/org/secret", k_token, "10.0.0.2"))
          .status,
      200);
}

// Issue 20 item 7: login CSRF.
TEST_F(HubRouterTest, OnlyThisServersSignInFormSignsIn) {
  const HttpResponse form = send("GET", "/login", "", false);
  ASSERT_EQ(form.status, 200);
  const std::string cookie = header(form, "Set-Cookie");
  ASSERT_TRUE(cookie.starts_with("kernelhub_login=")) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  const std::string value = cookie.substr(16, 64);
  EXPECT_NE(form.body.find("name=\"form\" value=\"" + value + "\""), std::string::npos);

  const auto post = [&](const std::string& body, std::vector<std::pair<std::string, std::string>>
                                                     headers) {
    headers.emplace_back("host", "127.0.0.1:9");
    return send("POST", "/login", body, false, headers);
  };
  const std::string fields = std::string("token=") + k_token + "&form=" + value;
  // Without the cookie, with another form's, without the field, from another origin: 403.
  EXPECT_EQ(post(fields, {}).status, 403);
  EXPECT_EQ(post(fields, {{"cookie", "kernelhub_login=" + std::string(64, 'a')}}).status, 403);
  EXPECT_EQ(post(std::string("token=") + k_token, {{"cookie", "kernelhub_login=" + value}}).status,
            403);
  EXPECT_EQ(post(fields, {{"cookie", "kernelhub_login=" + value},
                          {"origin", "http://evil.example"}})
                .status,
            403);
  EXPECT_EQ(post(fields, {{"cookie", "kernelhub_login=" + value}, {"origin", "null"}}).status,
            403);
  // The form it gave, posted from its own origin (or with no Origin at all): signed in.
  const HttpResponse in = post(fields, {{"cookie", "x=1; kernelhub_login=" + value},
                                        {"origin", "https://127.0.0.1:9"}});
  EXPECT_EQ(in.status, 303);
  EXPECT_TRUE(header(in, "Set-Cookie").starts_with("kernelhub_session=")) << header(in, "Set-Cookie");
  EXPECT_EQ(post(fields, {{"cookie", "kernelhub_login=" + value}}).status, 303);
}

}  // namespace kernelhub::server
