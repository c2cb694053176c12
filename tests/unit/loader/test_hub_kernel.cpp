// SPDX-License-Identifier: Apache-2.0
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "../cache/fake_hub.hpp"
#include "loader_test_support.hpp"
#include <kernelhub/loader/blob_verify.hpp>
#include <kernelhub/loader/hub_kernel.hpp>
#include <kernelhub/loader/kernel_status.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;
using cache::testing::FakeHub;

constexpr const char* k_cpu_variant = "torch29-cxx11-cpu-x86_64-linux";

// Several fake repositories behind one transport, plus the organizations' overviews.
class FakeHubs : public hub::Transport {
 public:
  std::map<std::string, std::shared_ptr<FakeHub>> repos;
  std::map<std::string, bool> trusted;  // organization -> trustedKernelPublisher
  std::vector<std::string> log;  // guarded by log_mutex: a load asks two things at once

  std::shared_ptr<FakeHub> add(const std::string& repo_id) {
    auto hub = std::make_shared<FakeHub>();
    hub->repo_id = repo_id;
    repos[repo_id] = hub;
    return hub;
  }

  std::mutex log_mutex;

  tl::expected<hub::HttpResponse, hub::TransportError> perform(const hub::HttpRequest& request) override {
    const std::string path = request.url.substr(std::string(FakeHub::k_base).size());
    {
      std::lock_guard guard(log_mutex);
      log.push_back(request.method + " " + path);
    }
    const std::string orgs = "/api/organizations/";
    if (path.rfind(orgs, 0) == 0) {
      const auto org = path.substr(orgs.size(), path.find('/', orgs.size()) - orgs.size());
      hub::HttpResponse response;
      const auto found = trusted.find(org);
      if (found == trusted.end()) {
        response.status = 404;
        return response;
      }
      response.status = 200;
      response.body = found->second ? R"({"trustedKernelPublisher": true})"
                                    : R"({"trustedKernelPublisher": false})";
      return response;
    }
    for (const auto& [id, hub] : repos) {
      if (path.find("/kernels/" + id + "/") != std::string::npos ||
          path == "/api/kernels/" + id + "/refs") {
        return hub->perform(request);
      }
    }
    hub::HttpResponse missing;
    missing.status = 404;
    missing.headers.add("X-Error-Code", "RepoNotFound");
    return missing;
  }
};

void add_relu_files(FakeHub& hub) {
  hub.files = {{"README.md", "# relu\n"},
               {"build/torch-cpu/metadata.json", testing::metadata_json("relu", "relu_noarch")},
               {"build/torch-cpu/__init__.py", "noarch = True\n"},
               {std::string("build/") + k_cpu_variant + "/metadata.json",
                testing::metadata_json("relu", "relu_arch")},
               {std::string("build/") + k_cpu_variant + "/__init__.py", "arch = True\n"},
               {"build/torch29-cxx11-cu128-x86_64-linux/__init__.py", "cuda = True\n"}};
  hub.branches = {{"main", hub.commit}, {"v1", hub.commit}, {"v2", hub.commit}};
}

struct Fixture {
  std::shared_ptr<FakeHubs> hubs = std::make_shared<FakeHubs>();
  std::shared_ptr<FakeHub> relu = hubs->add("org/relu");
  HubLoadContext context;

  Fixture() {
    add_relu_files(*relu);
    hubs->trusted = {{"org", true}, {"shady", false}};
    context.endpoint.url = FakeHub::k_base;
    context.endpoint.user_agent = "kernelhub-test";
    context.cache_dir = fs::absolute("cache");
    context.transport = hubs;
    context.client_options.progress_bar = false;
    context.client_options.retry.max_attempts = 1;
    context.client_options.sleep = [](std::chrono::milliseconds) {};
    context.system.torch_version = variants::ReleaseVersion::from_parts("2", "9");
    context.system.cxx11_abi = true;
  }

  HubKernelRequest request(std::optional<unsigned> version = 1) const {
    HubKernelRequest out;
    out.repo_id = "org/relu";
    out.version = version;
    return out;
  }
};

TEST(HubKernel, InstallsOnlyThePreferredVariantAtTheVersionCommit) {
  Fixture f;
  const auto kernel = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_EQ(kernel->variant, k_cpu_variant);
  EXPECT_EQ(kernel->commit, f.relu->commit);
  EXPECT_EQ(kernel->revision, f.relu->commit);  // RepoInfo.revision is the commit for version=
  EXPECT_EQ(kernel->repo_id, "org/relu");
  EXPECT_EQ(kernel->variant_path, f.context.cache_dir / "kernels--org--relu" / "snapshots" /
                                      f.relu->commit / "build" / k_cpu_variant);
  EXPECT_EQ(*util::read_file(kernel->variant_path / "__init__.py"), "arch = True\n");
  EXPECT_FALSE(fs::exists(kernel->variant_path.parent_path() / "torch-cpu"));
  ASSERT_EQ(kernel->warnings.size(), 1u);
  EXPECT_EQ(kernel->warnings[0], "You are using version 1 of 'org/relu', but version 2 is available.");
  ASSERT_FALSE(kernel->resolution.trace.empty());
  EXPECT_TRUE(kernel->resolution.trace.front().accepted());
  // The reference resolves versions offline from refs/v<N>.
  EXPECT_EQ(*util::read_file(f.context.cache_dir / "kernels--org--relu" / "refs" / "v1"),
            f.relu->commit);
}

TEST(HubKernel, OfflineLoadMakesNoRequestAndFindsTheSameVariant) {
  Fixture f;
  const auto online = install_hub_kernel(f.context, f.request(2));
  ASSERT_TRUE(online) << online.error().message;
  f.hubs->log.clear();
  auto request = f.request(2);
  request.local_files_only = true;
  request.check_trust = true;
  const auto offline = install_hub_kernel(f.context, request);
  ASSERT_TRUE(offline) << offline.error().message;
  EXPECT_EQ(offline->variant_path, online->variant_path);
  EXPECT_TRUE(f.hubs->log.empty());
  ASSERT_EQ(offline->warnings.size(), 1u);
  EXPECT_EQ(offline->warnings[0],
            "Skipping publisher trust check for 'org/relu' because Hugging Face Hub is in offline "
            "mode.");

  request.version.reset();
  request.revision = "89abcdef0123456789abcdef0123456789abcdef";
  const auto missing = install_hub_kernel(f.context, request);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, LoadErrorKind::not_found);
  EXPECT_EQ(missing.error().message.rfind("Cannot find a local snapshot for org/relu (revision: "
                                          "89abcdef0123456789abcdef0123456789abcdef).",
                                          0),
            0u);
  EXPECT_TRUE(f.hubs->log.empty());
}

TEST(HubKernel, TrustCheckUsesTheOrganizationOverview) {
  Fixture f;
  auto shady = f.hubs->add("shady/relu");
  add_relu_files(*shady);
  auto request = f.request();
  request.check_trust = true;
  EXPECT_TRUE(install_hub_kernel(f.context, request));

  request.repo_id = "shady/relu";
  const auto refused = install_hub_kernel(f.context, request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, LoadErrorKind::value);
  EXPECT_EQ(refused.error().message,
            "Kernel repository 'shady/relu' is not from a trusted publisher. Set "
            "trust_remote_code=True or add the repository ID to the trust_remote_code allowlist "
            "to allow loading kernels from untrusted sources.");

  request.repo_id = "nobody/relu";
  const auto unknown = install_hub_kernel(f.context, request);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message.rfind(
                "Kernel repository 'nobody/relu' could not verify publisher trust status.", 0),
            0u);

  request.repo_id = "shady/relu";
  request.check_trust = false;
  EXPECT_TRUE(install_hub_kernel(f.context, request));
}

// Holds back the publisher's overview until the refs request has come (or 5 s have passed): a
// loader that asks for them one after the other makes the overview wait in vain.
class OverlapProbe : public hub::Transport {
 public:
  explicit OverlapProbe(std::shared_ptr<hub::Transport> inner) : m_inner(std::move(inner)) {}

  bool overview_saw_refs() const {
    std::lock_guard guard(m_mutex);
    return m_overview_saw_refs;
  }

  tl::expected<hub::HttpResponse, hub::TransportError> perform(const hub::HttpRequest& request) override {
    if (request.url.ends_with("/refs")) {
      {
        std::lock_guard guard(m_mutex);
        m_refs_asked = true;
      }
      m_changed.notify_all();
    } else if (request.url.find("/api/organizations/") != std::string::npos) {
      std::unique_lock lock(m_mutex);
      m_overview_saw_refs =
          m_changed.wait_for(lock, std::chrono::seconds(5), [this] { return m_refs_asked; });
    }
    return m_inner->perform(request);
  }

 private:
  std::shared_ptr<hub::Transport> m_inner;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  bool m_refs_asked = false;
  bool m_overview_saw_refs = false;
};

TEST(HubKernel, TheTrustCheckAndTheVersionAreAskedSideBySide) {
  Fixture f;
  auto probe = std::make_shared<OverlapProbe>(f.hubs);
  f.context.transport = probe;
  auto request = f.request();
  request.check_trust = true;
  const auto kernel = install_hub_kernel(f.context, request);
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_EQ(kernel->variant, k_cpu_variant);
  // One round trip of waiting instead of two.
  EXPECT_TRUE(probe->overview_saw_refs());
}

TEST(HubKernel, AnUntrustedPublisherIsTheErrorEvenWhenTheVersionIsMissingToo) {
  Fixture f;
  auto shady = f.hubs->add("shady/relu");
  add_relu_files(*shady);
  auto request = f.request(7);
  request.repo_id = "shady/relu";
  request.check_trust = true;
  const auto refused = install_hub_kernel(f.context, request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message.rfind(
                "Kernel repository 'shady/relu' is not from a trusted publisher.", 0),
            0u)
      << refused.error().message;
  // Nothing of the kernel was downloaded for it.
  EXPECT_EQ(shady->count("GET", "/resolve/"), 0u);
}

TEST(HubKernel, FollowsARedirectOnceAndKeepsTheAskedRepoInfo) {
  Fixture f;
  auto old_repo = f.hubs->add("org/old");
  old_repo->commit = "89abcdef0123456789abcdef0123456789abcdef";
  old_repo->files = {{"kernel-status.toml", "kind = \"redirect\"\ndestination = \"org/relu\"\n"}};
  old_repo->branches = {{"v1", old_repo->commit}};
  auto request = f.request();
  request.repo_id = "org/old";
  const auto kernel = install_hub_kernel(f.context, request);
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_EQ(kernel->repo_id, "org/old");
  EXPECT_EQ(kernel->revision, old_repo->commit);
  EXPECT_EQ(kernel->commit, f.relu->commit);  // "main" of the destination
  EXPECT_NE(kernel->variant_path.string().find("kernels--org--relu"), std::string::npos);
  ASSERT_EQ(kernel->warnings.size(), 1u);
  EXPECT_EQ(kernel->warnings[0], "'org/old' redirected to 'org/relu'");

  request.follow_redirects = false;
  const auto unfollowed = install_hub_kernel(f.context, request);
  ASSERT_FALSE(unfollowed);
  EXPECT_EQ(unfollowed.error().kind, LoadErrorKind::not_found);
}

TEST(HubKernel, KernelStatusErrorsAreTheReferences) {
  EXPECT_EQ(parse_kernel_status("destination = \"a/b\"").error().message,
            "kernel-status.toml must contain a 'kind' field");
  EXPECT_EQ(parse_kernel_status("kind = \"moved\"").error().message,
            "Unknown kernel status kind: 'moved'");
  EXPECT_EQ(parse_kernel_status("kind = \"redirect\"").error().message,
            "kernel-status.toml must contain a 'destination' field");
  const auto redirect =
      parse_kernel_status("kind = \"redirect\"\ndestination = \"a/b\"\nrevision = \"v2\"\n");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(*redirect, (KernelRedirect{"a/b", "v2"}));
  EXPECT_EQ(parse_kernel_status("kind = [").error().kind, LoadErrorKind::value);
}

TEST(HubKernel, VersionAndRevisionErrors) {
  Fixture f;
  auto both = f.request();
  both.revision = "main";
  EXPECT_EQ(install_hub_kernel(f.context, both).error().message,
            "Only one of `revision` or `version` must be specified.");
  auto neither = f.request(std::nullopt);
  const auto none = install_hub_kernel(f.context, neither);
  EXPECT_EQ(none.error().kind, LoadErrorKind::value);
  EXPECT_EQ(none.error().message.rfind("A kernel version or revision must be specified.", 0), 0u);
  const auto unknown = install_hub_kernel(f.context, f.request(7));
  EXPECT_EQ(unknown.error().kind, LoadErrorKind::value);
  EXPECT_EQ(unknown.error().message, "Version 7 not found, available versions: 1, 2");
  auto bad_backend = f.request();
  bad_backend.backend = "rocm";
  EXPECT_EQ(install_hub_kernel(f.context, bad_backend).error().kind, LoadErrorKind::value);
}

TEST(HubKernel, NoFittingVariantIsFileNotFoundWithTheTrace) {
  Fixture f;
  f.context.system.torch_version = variants::ReleaseVersion::from_parts("2", "7");
  f.relu->files.erase("build/torch-cpu/metadata.json");
  f.relu->files.erase("build/torch-cpu/__init__.py");
  const auto none = install_hub_kernel(f.context, f.request());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, LoadErrorKind::not_found);
  EXPECT_EQ(none.error().message.rfind("Cannot find a build variant for this system in org/relu "
                                       "(revision: " + f.relu->commit + "):\n\n",
                                       0),
            0u);
  const auto has = has_hub_kernel(f.context, f.request());
  ASSERT_TRUE(has);
  EXPECT_FALSE(has->available);
}

TEST(HubKernel, ArchExcludedVariantIsRejectedInTheTrace) {
  Fixture f;
  f.context.system.backend = variants::SystemBackend{types::Backend::cuda,
                                                     variants::ReleaseVersion::from_parts("12", "8")};
  f.context.device.cuda = CudaCapability{8, 0};
  f.relu->files["build/torch29-cxx11-cu128-x86_64-linux/metadata.json"] =
      testing::metadata_json("relu", "relu_cu128", "cuda", "\"9.0\"");
  f.relu->files["build/torch-cuda/metadata.json"] = testing::metadata_json("relu", "relu_nc", "cuda");
  f.relu->files["build/torch-cuda/__init__.py"] = "noarch_cuda = True\n";
  const auto kernel = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_EQ(kernel->variant, "torch-cuda");
  bool rejected = false;
  for (const auto& decision : kernel->resolution.trace) {
    if (variants::to_string(decision.variant) == "torch29-cxx11-cu128-x86_64-linux") {
      rejected = decision.rejection.has_value() &&
                 decision.rejection->find("CUDA capability 8.0") != std::string::npos;
    }
  }
  EXPECT_TRUE(rejected);
  // get_kernel_variants does not read archs, as in the reference.
  const auto plain = hub_kernel_variants(f.context, f.request());
  ASSERT_TRUE(plain);
  EXPECT_EQ(variants::to_string(plain->resolution.trace.front().variant), "torch29-cxx11-cu128-x86_64-linux");
  EXPECT_TRUE(plain->resolution.trace.front().accepted());
}

TEST(HubKernel, CorruptedBlobIsFetchedAgainOnlineAndRefusedOffline) {
  Fixture f;
  const auto kernel = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(kernel) << kernel.error().message;
  const auto init = kernel->variant_path / "__init__.py";
  const auto blob = fs::canonical(init);
  fs::remove(blob);
  testing::write(blob, "import os; os.system('evil')\n");

  auto offline = f.request();
  offline.local_files_only = true;
  const auto refused = install_hub_kernel(f.context, offline);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, LoadErrorKind::io);
  EXPECT_NE(refused.error().message.find(std::string("\"build/") + k_cpu_variant + "/__init__.py\""),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find(blob.string()), std::string::npos);

  const auto repaired = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(repaired) << repaired.error().message;
  EXPECT_EQ(*util::read_file(init), "arch = True\n");
  EXPECT_TRUE(install_hub_kernel(f.context, offline));
}

TEST(HubKernel, VerifiedBlobsAreStampedAndNotHashedAgain) {
  Fixture f;
  const auto kernel = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(kernel) << kernel.error().message;
  const auto stamps = f.context.cache_dir / ".kernelhub" / "verified";
  BlobVerifyStats stats;
  const auto again = find_corrupt_files(kernel->variant_path, stamps, &stats);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(stats.files, 2u);
  EXPECT_EQ(stats.hashed, 0u);
  // A blob rewritten in place gets a new mtime and is hashed (and caught) again.
  const auto blob = fs::canonical(kernel->variant_path / "metadata.json");
  testing::write(blob, "{}");
  BlobVerifyStats after;
  const auto caught = find_corrupt_files(kernel->variant_path, stamps, &after);
  ASSERT_TRUE(caught);
  EXPECT_EQ(after.hashed, 1u);
  ASSERT_EQ(caught->size(), 1u);
  EXPECT_EQ(caught->front().relative_path, "metadata.json");
}

// Issue 25: a variant that passed every check is sealed, and a load that finds the seal intact
// skips the checks (no stamp is read or written); any change to the variant breaks the seal,
// and the checks catch the change as before.
TEST(HubKernel, ACheckedVariantIsSealedAndAChangeBreaksTheSeal) {
  Fixture f;
  f.context.seal_settle_seconds = 0;
  const auto kernel = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(kernel) << kernel.error().message;
  const auto seal = f.context.cache_dir / ".kernelhub" / "sealed" / "kernels--org--relu" /
                    kernel->commit / k_cpu_variant;
  ASSERT_TRUE(fs::exists(seal));

  const auto stamps = f.context.cache_dir / ".kernelhub" / "verified";
  fs::remove_all(stamps);
  auto offline = f.request();
  offline.local_files_only = true;
  const auto sealed = install_hub_kernel(f.context, offline);
  ASSERT_TRUE(sealed) << sealed.error().message;
  EXPECT_EQ(sealed->variant_path, kernel->variant_path);
  EXPECT_FALSE(fs::exists(stamps)) << "the blob check ran under an intact seal";

  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past the seal's clock tick
  const auto blob = fs::canonical(kernel->variant_path / "__init__.py");
  const auto mtime = fs::last_write_time(blob);
  testing::write(blob, "arch = Fals\n");  // the same size, its mtime put back
  fs::last_write_time(blob, mtime);
  const auto refused = install_hub_kernel(f.context, offline);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is corrupted"), std::string::npos)
      << refused.error().message;
}

// Issue 20 item 9: a variant whose files on the hub no longer match the digest in its
// metadata.json (changed after it was hashed, or signed, without a new digest) is refused on
// every load, online and offline, naming the file; the blob check alone finds nothing wrong.
TEST(HubKernel, AVariantThatDiffersFromItsDigestIsRefusedOnEveryLoad) {
  Fixture f;
  const std::string folder = std::string("build/") + k_cpu_variant;
  const std::string metadata_with_digest = [&] {
    std::string json = testing::metadata_json("relu", "relu_arch");
    json.pop_back();
    // sha256 of "arch = True\n", as `kernel-builder hash` writes it.
    return json +
           ", \"digest\": {\"algorithm\": \"sha256\", \"files\": {\"__init__.py\": "
           "\"HK4eapIHR1JJFQjJFpIQUOd6W0Op/1Tr9V6+hFhnIgo=\"}}}";
  }();
  f.relu->files[folder + "/metadata.json"] = metadata_with_digest;
  const auto matching = install_hub_kernel(f.context, f.request());
  ASSERT_TRUE(matching) << matching.error().message;

  auto changed_hub = std::make_shared<FakeHubs>();
  auto changed = changed_hub->add("org/relu");
  add_relu_files(*changed);
  changed->commit = std::string(40, 'c');
  changed->branches = {{"main", changed->commit}, {"v1", changed->commit}};
  changed->files[folder + "/metadata.json"] = metadata_with_digest;
  changed->files[folder + "/__init__.py"] = "import os; os.system('changed after signing')\n";
  changed_hub->trusted = {{"org", true}};
  f.context.transport = changed_hub;
  f.context.cache_dir = fs::absolute("changed-cache");
  for (const bool offline : {false, true}) {
    // Offline by commit: refs/v1 is written only by a load that succeeded.
    auto request = offline ? f.request(std::nullopt) : f.request();
    if (offline) {
      request.revision = changed->commit;
    }
    request.local_files_only = offline;
    const auto refused = install_hub_kernel(f.context, request);
    ASSERT_FALSE(refused) << offline;
    EXPECT_EQ(refused.error().kind, LoadErrorKind::import_error);
    EXPECT_NE(refused.error().message.find("kernel integrity check failed\nFile hash mismatch "
                                           "for __init__.py"),
              std::string::npos)
        << refused.error().message;
  }
}

TEST(HubKernel, HasKernelAndVariants) {
  Fixture f;
  const auto has = has_hub_kernel(f.context, f.request());
  ASSERT_TRUE(has) << has.error().message;
  EXPECT_TRUE(has->available);
  auto bad = f.request(9);
  EXPECT_FALSE(has_hub_kernel(f.context, bad).has_value());  // a ValueError, as in the reference
  const auto decisions = hub_kernel_variants(f.context, f.request());
  ASSERT_TRUE(decisions);
  ASSERT_EQ(decisions->resolution.trace.size(), 3u);
  EXPECT_EQ(variants::to_string(decisions->resolution.trace[0].variant), k_cpu_variant);
  EXPECT_EQ(variants::to_string(decisions->resolution.trace[1].variant), "torch-cpu");
  EXPECT_FALSE(decisions->resolution.trace[2].accepted());
  // Version 1 is not the newest: both queries warn, as the install does.
  const std::vector<std::string> outdated = {
      "You are using version 1 of 'org/relu', but version 2 is available."};
  EXPECT_EQ(has->warnings, outdated);
  EXPECT_EQ(decisions->warnings, outdated);
  const auto newest = has_hub_kernel(f.context, f.request(2));
  ASSERT_TRUE(newest) << newest.error().message;
  EXPECT_TRUE(newest->warnings.empty());
}

}  // namespace
}  // namespace kernelhub::loader
