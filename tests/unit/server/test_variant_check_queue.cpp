// SPDX-License-Identifier: Apache-2.0
// Issue 20 item 9: the hub verifies a kernel's variants after the commit that brings them, not
// when a page first shows them, and keeps what it found under the repository. The router runs
// over a real RepositoryStore in the test's temp dir with its check queue run by the test
// (Run::by_caller), so "queued" and "done" are states the test steps through, not timings.
#include <kernelhub/server/variant_check_queue.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/server/hub_router.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/crypto.hpp>
#include <kernelhub/verify/keyed_bundle.hpp>
#include <kernelhub/verify/signing_key.hpp>

#include "server_test_support.hpp"

namespace kernelhub::server {

namespace {

using nlohmann::json;

using testing::k_token;
constexpr const char* k_init = "def relu(x):\n    return x.clamp(min=0)\n";
constexpr const char* k_variant = "build/torch-cpu";

std::string sha256_base64(std::string_view bytes) {
  metadata::StreamHasher hasher(metadata::DigestAlgorithm::sha256);
  hasher.update(bytes);
  return hasher.finish();
}

// metadata.json whose digest covers __init__.py with `init`'s bytes.
std::string metadata_for(std::string_view init) {
  return json({{"name", "relu"},
               {"id", "_relu_cpu_0abc"},
               {"version", 1},
               {"license", "apache-2.0"},
               {"python-depends", json::array()},
               {"backend", {{"type", "cpu"}}},
               {"digest",
                {{"algorithm", "sha256"}, {"files", {{"__init__.py", sha256_base64(init)}}}}}})
      .dump(2);
}

class VariantCheckQueueTest : public ::testing::Test {
 protected:
  VariantCheckQueueTest()
      : m_key(*verify::generate_signing_key(verify::KeyAlgorithm::ecdsa_p256)),
        m_router(std::make_unique<HubRouter>(settings(), VariantCheckQueue::Run::by_caller)) {}

  ServerSettings settings() const {
    ServerSettings settings;
    settings.root = std::filesystem::current_path() / "root";
    settings.tokens = {k_token};
    settings.trusted_keys = {{m_key.hint(), "ECDSA P-256", m_key.public_pem(), "inline"}};
    return settings;
  }

  HttpResponse send(std::string method, std::string target, const std::string& body = "") {
    HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = body;
    request.base_url = "http://127.0.0.1:9";
    request.headers.emplace_back("authorization", std::string("Bearer ") + k_token);
    return m_router->handle(request);
  }

  // One commit of `files` (path -> bytes) to `revision`; returns the commit id.
  std::string commit(const std::string& revision,
                     const std::vector<std::pair<std::string, std::string>>& files,
                     const std::string& query = "") {
    std::string body = R"({"key": "header", "value": {"summary": "upload"}})"
                       "\n";
    for (const auto& [path, bytes] : files) {
      body += json({{"key", "file"},
                    {"value", {{"path", path},
                               {"content", verify::base64_encode(bytes)},
                               {"encoding", "base64"}}}})
                  .dump() +
              "\n";
    }
    const auto response = send("POST", "/api/kernels/org/k/commit/" + revision + query, body);
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body).value("commitOid", "");
  }

  // The files of a variant signed with the hub's key, its __init__.py holding `init`.
  std::vector<std::pair<std::string, std::string>> signed_variant(std::string_view init) const {
    const std::string metadata = metadata_for(k_init);
    return {{std::string(k_variant) + "/__init__.py", std::string(init)},
            {std::string(k_variant) + "/metadata.json", metadata},
            {std::string(k_variant) + "/metadata.json.sigstore",
             *verify::write_keyed_bundle(metadata, m_key)}};
  }

  json checks(const std::string& revision) {
    const auto response = send("GET", "/api/kernels/org/k/variant-checks/" + revision);
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body);
  }

  std::string page() {
    const auto response = send("GET", "/kernels/org/k");
    EXPECT_EQ(response.status, 200) << response.body;
    return response.body;
  }

  std::filesystem::path record_path(const std::string& tree) const {
    return std::filesystem::current_path() / "root" / "kernels" / "org" / "k.git" / "kernelhub" /
           "variant-checks" / (tree + ".json");
  }

  // org/k, the kernel repository every test commits to; the answer's status.
  int create_kernel_repo() {
    return send("POST", "/api/repos/create",
                R"({"name": "k", "organization": "org", "type": "kernel"})")
        .status;
  }

  void restart() {
    m_router.reset();
    m_router = std::make_unique<HubRouter>(settings(), VariantCheckQueue::Run::by_caller);
  }

  verify::SigningKey m_key;
  std::unique_ptr<HubRouter> m_router;
};

TEST_F(VariantCheckQueueTest, UploadedVariantsAreCheckedAfterTheCommitAndTheRecordIsShown) {
  ASSERT_EQ(create_kernel_repo(), 200);
  const std::string first = commit("main", signed_variant(k_init));
  // Answered before the check: queued, nothing recorded, and the page says so.
  EXPECT_TRUE(m_router->variant_checks().pending({RepoType::kernel, "org", "k"}, first));
  json state = checks("main");
  EXPECT_EQ(state["commit"], first);
  EXPECT_EQ(state["verifying"], true);
  ASSERT_EQ(state["variants"].size(), 1u);
  EXPECT_EQ(state["variants"][0]["state"], "verifying");
  const std::string tree = state["variants"][0]["tree"];
  EXPECT_FALSE(std::filesystem::exists(record_path(tree)));
  EXPECT_NE(page().find("<td><span class=\"muted verifying\">verifying</span></td>"),
            std::string::npos);

  // The worker's turn: the variant's files and signature are checked and recorded.
  ASSERT_TRUE(m_router->variant_checks().run_next());
  EXPECT_FALSE(m_router->variant_checks().run_next());
  EXPECT_FALSE(m_router->variant_checks().pending({RepoType::kernel, "org", "k"}, first));
  ASSERT_TRUE(std::filesystem::exists(record_path(tree)));
  state = checks("main");
  EXPECT_EQ(state["verifying"], false);
  const json& variant = state["variants"][0];
  EXPECT_EQ(variant["state"], "recorded");
  EXPECT_EQ(variant["checkedAt"], "upload");
  EXPECT_EQ(variant["checkedCommit"], first);
  EXPECT_EQ(variant["digest"], json({{"matches", true}, {"detail", ""}}));
  EXPECT_EQ(variant["signed"], true);
  EXPECT_EQ(variant["signature"], json({{"valid", true}, {"detail", "key " + m_key.hint()}}));
  std::string html = page();
  EXPECT_NE(html.find("files match"), std::string::npos) << html;
  EXPECT_NE(html.find("<span class=\"verified\">valid</span> (key " + m_key.hint() + ")"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("at upload (<a href=\"/kernels/org/k/commit/" + first + "\">"),
            std::string::npos)
      << html;

  // A file changed on the hub without signing again: a new tree, checked after its commit.
  const std::string second =
      commit("main", {{std::string(k_variant) + "/__init__.py", std::string(k_init) + "#\n"}});
  ASSERT_TRUE(m_router->variant_checks().run_next());
  state = checks("main");
  const json& changed = state["variants"][0];
  EXPECT_NE(changed["tree"], tree);
  EXPECT_EQ(changed["checkedCommit"], second);
  EXPECT_EQ(changed["digest"]["matches"], false);
  EXPECT_EQ(changed["digest"]["detail"].get<std::string>().rfind(
                "File hash mismatch for __init__.py: expected: ", 0),
            0u)
      << changed;
  EXPECT_EQ(changed["signature"]["valid"], true);
  html = page();
  EXPECT_NE(html.find("<tr data-variant=\"torch-cpu\" class=\"mismatch\">"), std::string::npos)
      << html;
  EXPECT_NE(html.find("valid (key " + m_key.hint() + "), but the files changed after signing"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("id=\"variant-mismatch\""), std::string::npos) << html;
  // The first commit's record still stands for its tree.
  EXPECT_EQ(checks(first)["variants"][0]["digest"]["matches"], true);

  // A restart keeps the records: the page shows the upload's check, not one of its own.
  restart();
  EXPECT_FALSE(m_router->variant_checks().run_next());
  state = checks("main");
  EXPECT_EQ(state["variants"][0]["checkedAt"], "upload");
  EXPECT_EQ(state["variants"][0]["digest"]["matches"], false);
  EXPECT_NE(page().find("at upload (<a href=\"/kernels/org/k/commit/" + second + "\">"),
            std::string::npos);
}

TEST_F(VariantCheckQueueTest, TreesCommittedBeforeRecordsAreCheckedWhenFirstShown) {
  ASSERT_EQ(create_kernel_repo(), 200);
  const std::string sha = commit("main", signed_variant(k_init));
  // The server stopped before its queue ran (or the commit predates the queue): no record.
  restart();
  const std::string tree = checks("main")["variants"][0]["tree"];
  EXPECT_EQ(checks("main")["variants"][0]["state"], "unchecked");
  // The API only reports; the page checks it and keeps what it found.
  EXPECT_FALSE(std::filesystem::exists(record_path(tree)));
  const std::string html = page();
  EXPECT_NE(html.find("<td>when first shown</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("files match"), std::string::npos) << html;
  ASSERT_TRUE(std::filesystem::exists(record_path(tree)));
  const json variant = checks("main")["variants"][0];
  EXPECT_EQ(variant["checkedAt"], "page view");
  EXPECT_EQ(variant["checkedCommit"], sha);
  EXPECT_EQ(variant["signature"]["valid"], true);
}

TEST_F(VariantCheckQueueTest, KeysChangedSinceTheRecordGetTheSignatureCheckedAgain) {
  ASSERT_EQ(create_kernel_repo(), 200);
  commit("main", signed_variant(k_init));
  ASSERT_TRUE(m_router->variant_checks().run_next());
  // The hub stops trusting the key: the recorded "valid" no longer holds.
  const auto root = std::filesystem::current_path() / "root";
  std::ofstream(root / "config.toml") << "[signing]\ntrusted-keys = []\n";
  ASSERT_TRUE(m_router->reload(HubRouter::Reload::always));
  const json variant = checks("main")["variants"][0];
  EXPECT_EQ(variant["checkedAt"], "upload");
  EXPECT_EQ(variant["signatureCheckedAgain"], true);
  EXPECT_EQ(variant["digest"]["matches"], true);
  EXPECT_EQ(variant["signature"]["valid"], false) << variant;
  const std::string html = page();
  EXPECT_NE(html.find("not valid: "), std::string::npos) << html;
  EXPECT_NE(html.find("signature checked again: the hub's keys changed since"), std::string::npos)
      << html;
}

TEST_F(VariantCheckQueueTest, PullRequestCommitsAndMergesAreQueuedToo) {
  ASSERT_EQ(create_kernel_repo(), 200);
  const std::string opened = commit("main", signed_variant(k_init), "?create_pr=1");
  const RepoId id{RepoType::kernel, "org", "k"};
  EXPECT_TRUE(m_router->variant_checks().pending(id, opened));
  const std::string pushed =
      commit("refs%2Fpr%2F1", {{std::string(k_variant) + "/extra.py", "X = 1\n"}});
  EXPECT_TRUE(m_router->variant_checks().pending(id, pushed));
  ASSERT_TRUE(m_router->variant_checks().run_next());
  ASSERT_TRUE(m_router->variant_checks().run_next());
  const auto merged = send("POST", "/api/kernels/org/k/discussions/1/merge", "{}");
  ASSERT_EQ(merged.status, 200) << merged.body;
  const std::string main_head = checks("main")["commit"];
  EXPECT_TRUE(m_router->variant_checks().pending(id, main_head));
  // The merge brings the tree the pull request's head had: recorded already, nothing to hash.
  EXPECT_EQ(checks("main")["variants"][0]["state"], "recorded");
  EXPECT_EQ(checks("main")["variants"][0]["checkedCommit"], pushed);
  EXPECT_EQ(checks("main")["variants"][0]["digest"]["detail"].get<std::string>().rfind(
                "Unknown file: extra.py", 0),
            0u);
  ASSERT_TRUE(m_router->variant_checks().run_next());
  EXPECT_FALSE(m_router->variant_checks().pending(id, main_head));
}

TEST_F(VariantCheckQueueTest, AStoppedCheckRecordsNothing) {
  ASSERT_EQ(create_kernel_repo(), 200);
  const std::string sha = commit("main", signed_variant(k_init));
  const auto repo = m_router->store().open({RepoType::kernel, "org", "k"});
  ASSERT_TRUE(repo);
  std::stop_source stopping;
  stopping.request_stop();
  const auto checked = record_variant_checks(repo->git, sha, settings().trusted_keys,
                                             VariantCheckRecord::Origin::upload,
                                             stopping.get_token());
  ASSERT_TRUE(checked);
  EXPECT_EQ(*checked, 0u);
  EXPECT_EQ(checks("main")["variants"][0]["state"], "verifying");
  const std::string tree = checks("main")["variants"][0]["tree"];
  EXPECT_FALSE(std::filesystem::exists(record_path(tree)));
  // Not stopped: recorded.
  EXPECT_EQ(record_variant_checks(repo->git, sha, settings().trusted_keys,
                                  VariantCheckRecord::Origin::upload),
            std::size_t{1});
  EXPECT_TRUE(std::filesystem::exists(record_path(tree)));
}

TEST(VariantCheckQueue, ACommitIsQueuedOnceAndTheQueueIsBounded) {
  RepositoryStore store(std::filesystem::current_path() / "root");
  VariantCheckQueue queue(store, VariantCheckQueue::Run::by_caller);
  const RepoId id{RepoType::kernel, "org", "k"};
  for (std::size_t i = 0; i < VariantCheckQueue::k_max_jobs + 10; ++i) {
    queue.enqueue(id, fmt::format("{:040}", i), {});
  }
  queue.enqueue(id, fmt::format("{:040}", 0), {});  // already queued: once only
  EXPECT_TRUE(queue.pending(id, fmt::format("{:040}", VariantCheckQueue::k_max_jobs - 1)));
  EXPECT_FALSE(queue.pending(id, fmt::format("{:040}", VariantCheckQueue::k_max_jobs)));
  std::size_t ran = 0;
  while (queue.run_next()) {
    ++ran;  // the repository does not exist: nothing is recorded, the job still ends
  }
  EXPECT_EQ(ran, VariantCheckQueue::k_max_jobs);
  EXPECT_FALSE(queue.pending(id, fmt::format("{:040}", 0)));
}

}  // namespace

}  // namespace kernelhub::server
