// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "../cache/cache_test_support.hpp"
#include "../cache/fake_hub.hpp"
#include <kernelhub/cache/repo_cache.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/loader/kernel_lock.hpp>
#include <kernelhub/loader/kernel_lock_hub.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;

const std::string k_a40(40, 'a');
const std::string k_b40(40, 'b');
const std::string k_c64(64, 'c');

// What kernels 0.17.2's KernelLocks.to_json() printed for these three locks (given unsorted).
const std::string k_reference_dependency_lock = R"([
  {
    "dependency": {
      "repo-id": "org/a",
      "version": 2
    },
    "lock": {
      "commit": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    }
  },
  {
    "dependency": {
      "repo-id": "org/b",
      "version": 1
    },
    "lock": {
      "commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    }
  },
  {
    "dependency": {
      "repo-id": "org/c",
      "revision": "main"
    },
    "lock": {
      "commit": "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
    }
  }
])";

KernelLockFile three_locks() {
  KernelLockFile lock;
  lock.entries = {{"org/b", 1, std::nullopt, k_a40, {}},
                  {"org/c", std::nullopt, "main", k_c64, {}},
                  {"org/a", 2, std::nullopt, k_b40, {}}};
  return lock;
}

std::string render_errors(std::string_view text) {
  util::DiagnosticCollector sink;
  EXPECT_FALSE(read_kernel_lock(text, "kernels.lock", sink).has_value());
  std::string out;
  for (const auto& d : sink.sorted()) {
    out += d.message + "\n";
  }
  return out;
}

TEST(KernelLock, RendersTheDependencyFormatAsTheReferenceSortedWithoutTrailingNewline) {
  EXPECT_EQ(render_kernel_lock(three_locks()), k_reference_dependency_lock);
  EXPECT_EQ(render_kernel_lock(KernelLockFile{}), "[]");
}

TEST(KernelLock, DependencyFormatRoundTrips) {
  util::DiagnosticCollector sink;
  const auto read = read_kernel_lock(k_reference_dependency_lock, "kernels.lock", sink);
  ASSERT_TRUE(read) << (sink.all().empty() ? "" : sink.all()[0].message);
  EXPECT_EQ(read->format, LockFormat::dependency);
  ASSERT_EQ(read->entries.size(), 3u);
  EXPECT_EQ(read->entries[0].repo_id, "org/a");
  EXPECT_EQ(read->entries[0].version, std::optional<std::uint64_t>(2));
  EXPECT_EQ(read->entries[2].revision, std::optional<std::string>("main"));
  EXPECT_EQ(read->find("org/c")->commit, k_c64);
  EXPECT_EQ(read->find("org/zzz"), nullptr);
  EXPECT_EQ(render_kernel_lock(*read), k_reference_dependency_lock);
}

TEST(KernelLock, VersionsSortBeforeRevisionsNumerically) {
  KernelLockFile lock;
  lock.entries = {{"o/a", std::nullopt, "abc", k_a40, {}}, {"o/a", 10, std::nullopt, k_a40, {}},
                  {"o/a", 2, std::nullopt, k_a40, {}}, {"O/b", 1, std::nullopt, k_a40, {}}};
  util::DiagnosticCollector sink;
  const auto read = read_kernel_lock(render_kernel_lock(lock), "kernels.lock", sink);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->entries[0].repo_id, "O/b");
  EXPECT_EQ(read->entries[1].version, std::optional<std::uint64_t>(2));
  EXPECT_EQ(read->entries[2].version, std::optional<std::uint64_t>(10));
  EXPECT_EQ(read->entries[3].revision, std::optional<std::string>("abc"));
}

TEST(KernelLock, LegacyFormatRoundTripsAsPythonJsonDumpWritesIt) {
  KernelLockFile lock;
  lock.format = LockFormat::legacy;
  lock.entries = {{"org/z", std::nullopt, std::nullopt, k_a40,
                   {{"torch-cpu", VariantLock{"sha256-" + std::string(64, '1')}}}},
                  {"org/a", std::nullopt, std::nullopt, k_b40, {}}};
  const std::string expected = "[\n  {\n    \"repo_id\": \"org/z\",\n    \"sha\": \"" + k_a40 +
                               "\",\n    \"variants\": {\n      \"torch-cpu\": {\n        \"hash\": \"sha256-" +
                               std::string(64, '1') +
                               "\",\n        \"hash_type\": \"git_lfs_concat\"\n      }\n    }\n  },\n"
                               "  {\n    \"repo_id\": \"org/a\",\n    \"sha\": \"" + k_b40 +
                               "\",\n    \"variants\": {}\n  }\n]";
  EXPECT_EQ(render_kernel_lock(lock), expected);
  util::DiagnosticCollector sink;
  const auto read = read_kernel_lock(expected, "kernels.lock", sink);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, lock);
}

TEST(KernelLock, CommitsAreReadBackLowercase) {
  util::DiagnosticCollector sink;
  const auto read = read_kernel_lock(
      R"([{"dependency": {"repo-id": "o/a", "version": 1}, "lock": {"commit": ")" + std::string(40, 'A') + "\"}}]",
      "kernels.lock", sink);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->entries[0].commit, k_a40);
}

TEST(KernelLock, BadFilesReportEveryProblemWithEntryAndField) {
  const std::string text = R"([
  {"dependency": {"repo-id": "o/a", "version": 1}, "lock": {"commit": "abc"}},
  {"dependency": {"repo-id": "o/b", "version": 1, "x": 1}, "lock": {"commit": ")" + k_a40 + R"("}},
  {"dependency": {"repo-id": "o/c", "version": 1, "revision": "main"}, "lock": {"commit": ")" + k_a40 + R"("}},
  {"dependency": {"repo-id": "o/d"}, "lock": {"commit": ")" + k_a40 + R"("}},
  {"dependency": {"repo-id": "o/e", "version": -1}, "lock": {"commit": ")" + k_a40 + R"("}}
])";
  const auto errors = render_errors(text);
  EXPECT_NE(errors.find("[0].lock.commit"), std::string::npos) << errors;
  EXPECT_NE(errors.find("\"abc\""), std::string::npos) << errors;
  EXPECT_NE(errors.find("[1].dependency: unknown key \"x\""), std::string::npos) << errors;
  EXPECT_NE(errors.find("[2].dependency: \"version\" and \"revision\" are mutually exclusive"),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("[3].dependency: either \"version\" or \"revision\" must be specified"),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("[4].dependency.version"), std::string::npos) << errors;
}

TEST(KernelLock, RejectsDuplicatesObjectsAndSyntaxErrors) {
  const std::string entry = R"({"dependency": {"repo-id": "o/a", "version": 1}, "lock": {"commit": ")" + k_a40 + "\"}}";
  EXPECT_NE(render_errors("[" + entry + "," + entry + "]").find("duplicate lock for \"o/a\""), std::string::npos);
  EXPECT_NE(render_errors("{}").find("expected an array of locks"), std::string::npos);
  util::DiagnosticCollector sink;
  EXPECT_FALSE(read_kernel_lock("[\n  {,\n]", "kernels.lock", sink));
  ASSERT_FALSE(sink.all().empty());
  EXPECT_EQ(sink.all()[0].location.file, "kernels.lock");
  EXPECT_EQ(sink.all()[0].location.line, 2u);
}

TEST(KernelLock, LegacyEntriesCheckHashTypeAndKeys) {
  const std::string text = R"([{"repo_id": "o/a", "sha": ")" + k_a40 +
                           R"(", "variants": {"torch-cpu": {"hash": "sha256-00", "hash_type": "md5"}}, "extra": 1}])";
  const auto errors = render_errors(text);
  EXPECT_NE(errors.find("unknown key \"extra\""), std::string::npos) << errors;
  EXPECT_NE(errors.find("unknown hash type \"md5\""), std::string::npos) << errors;
}

TEST(KernelLock, MissingFileSaysWhichProject) {
  const auto read = read_kernel_lock_file(fs::path("project") / "kernels.lock");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "no kernels.lock file found in: project");
}

cache::TreeListing synthetic_listing() {
  cache::TreeListing listing;
  listing["README.md"] = {7, std::string(40, '9'), {}, {}, {}};
  listing["build/torch-cpu/relu/__init__.py"] = {6, "ce013625030ba8dba906f756967f9e9ca394464a", {}, {}, {}};
  listing["build/torch-cpu/relu/_ops.so"] = {130, std::string(40, '1'), std::string(32, 'a') + std::string(32, 'b'), 9, {}};
  listing["build/torch-cpu/metadata.json"] = {2, std::string(40, '2'), {}, {}, {}};
  listing["build/torch-cpu/relu/__pycache__/x.cpython-312.pyc"] = {1, std::string(40, '3'), {}, {}, {}};
  listing["build/torch-cpu/relu/y.pyc"] = {1, std::string(40, '4'), {}, {}, {}};
  listing["build/tvm-ffi-cpu/relu/__init__.py"] = {1, std::string(40, '5'), {}, {}, {}};
  return listing;
}

// SHA-256 of `bytes`, hex, computed here with OpenSSL directly rather than through the
// library, and with the hashes decoded by std::stoi, so the test checks the algorithm rather
// than repeating its code.
std::string independent_sha256(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    char buffer[3];
    std::snprintf(buffer, sizeof buffer, "%02x", digest[i]);
    hex += buffer;
  }
  return hex;
}

std::string decode(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(KernelLock, VariantHashMatchesAnIndependentComputation) {
  const auto listing = synthetic_listing();
  // Sorted by path bytes: metadata.json < relu/__init__.py < relu/_ops.so; bytecode left out;
  // the LFS file contributes its sha256, the others their git blob id.
  const std::string message = "metadata.json" + decode(std::string(40, '2')) + "relu/__init__.py" +
                              decode("ce013625030ba8dba906f756967f9e9ca394464a") + "relu/_ops.so" +
                              decode(std::string(32, 'a') + std::string(32, 'b'));
  const auto expected = "sha256-" + independent_sha256(message);
  EXPECT_EQ(variant_hash(listing, "torch-cpu"), std::optional<std::string>(expected));
  // The same value the reference's Python (hashlib over sorted (bytes, hex) pairs) gives.
  EXPECT_EQ(expected, "sha256-eca4886481bcf1387eb570f37436615ea87fe67e16e8ecbaf5d3cd725dc0f8b6");
  EXPECT_FALSE(variant_hash(listing, "torch-cuda").has_value());
}

TEST(KernelLock, LegacyLocksCoverOnlyTorchVariants) {
  const auto locks = legacy_variant_locks(synthetic_listing());
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks.begin()->first, "torch-cpu");
  EXPECT_EQ(locks.begin()->second.hash_type, "git_lfs_concat");
}

TEST(KernelLockProject, ReadsDependenciesInFileOrder) {
  ASSERT_TRUE(util::write_file_atomic("pyproject.toml",
                                      "[project]\nname = \"x\"\n\n[tool.kernels.dependencies]\n"
                                      "\"org/zeta\" = 2\n\"org/alpha\" = 1\n"));
  const auto deps = read_project_dependencies(".");
  ASSERT_TRUE(deps) << deps.error().message;
  ASSERT_EQ(deps->size(), 2u);
  EXPECT_EQ((*deps)[0].repo_id, "org/zeta");
  EXPECT_EQ((*deps)[0].version, std::optional<std::uint64_t>(2));
  EXPECT_EQ((*deps)[1].repo_id, "org/alpha");
}

TEST(KernelLockProject, MissingTableAndBadVersionsAreClearErrors) {
  ASSERT_TRUE(util::write_file_atomic("pyproject.toml", "[project]\nname = \"x\"\n"));
  auto deps = read_project_dependencies(".");
  ASSERT_FALSE(deps);
  EXPECT_NE(deps.error().message.find("pyproject.toml: no [tool.kernels.dependencies] table"), std::string::npos);
  ASSERT_TRUE(util::write_file_atomic("pyproject.toml",
                                      "[tool.kernels.dependencies]\n\"org/a\" = \"1\"\n\"org/b\" = -1\n"));
  deps = read_project_dependencies(".");
  ASSERT_FALSE(deps);
  EXPECT_NE(deps.error().message.find("pyproject.toml:2:11: the version of \"org/a\""), std::string::npos)
      << deps.error().message;
  EXPECT_NE(deps.error().message.find(":3:11: the version of \"org/b\""), std::string::npos)
      << deps.error().message;
  EXPECT_FALSE(read_project_dependencies("nowhere"));
}

std::shared_ptr<cache::testing::FakeHub> versioned_hub() {
  auto hub = std::make_shared<cache::testing::FakeHub>();
  hub->files = {{"README.md", "# relu\n"},
                {"build/torch-cpu/relu/__init__.py", "hello\n"},
                {"build/torch-cpu/relu/ops.py", "ops\n"}};
  hub->branches = {{"main", hub->commit}, {"v1", hub->commit}};
  hub->organizations = {{"org", true}};
  return hub;
}

TEST(KernelLockProject, LocksVersionsToCommitsAndWritesTheFile) {
  auto hub = versioned_hub();
  const auto client = cache::testing::fake_client(hub);
  const cache::HubCache hub_cache("hub", client);
  ASSERT_TRUE(util::write_file_atomic("pyproject.toml", "[tool.kernels.dependencies]\n\"org/relu\" = 1\n"));
  const auto locked = lock_project(hub_cache, ".", LockFormat::legacy);
  ASSERT_TRUE(locked) << locked.error().message;
  ASSERT_EQ(locked->lock.entries.size(), 1u);
  EXPECT_EQ(locked->lock.entries[0].commit, hub->commit);
  ASSERT_TRUE(locked->lock.entries[0].variants.contains("torch-cpu"));
  const auto text = util::read_file("kernels.lock");
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, render_kernel_lock(locked->lock));

  ASSERT_TRUE(util::write_file_atomic("pyproject.toml", "[tool.kernels.dependencies]\n\"org/relu\" = 3\n"));
  const auto missing = lock_project(hub_cache, ".", LockFormat::dependency);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("Version 3 not found"), std::string::npos) << missing.error().message;
}

// Issue 27: as `kernels lock`, a kernel whose organization is not a trusted kernel publisher is
// refused before anything of it is fetched, unless the caller consents.
TEST(KernelLockProject, AnUntrustedPublisherIsRefusedBeforeAnythingIsFetched) {
  auto hub = versioned_hub();
  hub->organizations = {{"org", false}};
  const auto client = cache::testing::fake_client(hub);
  const cache::HubCache hub_cache("hub", client);
  ASSERT_TRUE(util::write_file_atomic("pyproject.toml", "[tool.kernels.dependencies]\n\"org/relu\" = 1\n"));
  const auto refused = lock_project(hub_cache, ".", LockFormat::dependency);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "Kernel repository 'org/relu' is not from a trusted publisher. Set trust_remote_code=True "
            "or add the repository ID to the trust_remote_code allowlist to allow loading kernels "
            "from untrusted sources.");
  EXPECT_FALSE(fs::exists("kernels.lock"));
  EXPECT_EQ(hub->count("GET", "/api/organizations/org/overview"), 1u);
  EXPECT_EQ(hub->count("GET", "/api/kernels/"), 0u);

  // Another repository on the allowlist is no consent for this one; this one's is, and so is
  // trusting every publisher; neither asks for the overview.
  EXPECT_FALSE(lock_project(hub_cache, ".", LockFormat::dependency, RemoteCodeTrust{false, {"org/other"}}));
  const auto before = hub->count("GET", "/api/organizations/");
  const auto allowed = lock_project(hub_cache, ".", LockFormat::dependency, RemoteCodeTrust{false, {"org/relu"}});
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->lock.entries.at(0).commit, hub->commit);
  EXPECT_TRUE(lock_project(hub_cache, ".", LockFormat::dependency, RemoteCodeTrust{true, {}}));
  EXPECT_EQ(hub->count("GET", "/api/organizations/"), before);
}

TEST(KernelLockProject, AnUnreadableOverviewOrOfflineIsRefusedWithoutConsent) {
  auto hub = versioned_hub();
  hub->organizations.clear();  // the overview answers 404, as for a user namespace
  const auto client = cache::testing::fake_client(hub);
  const cache::HubCache hub_cache("hub", client);
  ASSERT_TRUE(util::write_file_atomic("pyproject.toml", "[tool.kernels.dependencies]\n\"org/relu\" = 1\n"));
  const auto unknown = lock_project(hub_cache, ".", LockFormat::dependency);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message.rfind("Kernel repository 'org/relu' could not verify publisher trust status. ", 0),
            0u) << unknown.error().message;
  // Fill the cache with consent (and v1's ref, as a load by version leaves it), then lock
  // offline: the overview cannot be read, so the lock is refused as the reference's (which
  // cannot lock offline at all), and consent still locks from the cache.
  ASSERT_TRUE(lock_project(hub_cache, ".", LockFormat::dependency, RemoteCodeTrust{true, {}}));
  ASSERT_TRUE(cache::RepoCache("hub", cache::testing::kernel_ref()).write_ref("v1", hub->commit));
  hub->organizations = {{"org", true}};
  const auto offline_client = cache::testing::fake_client(hub, /*offline=*/true);
  const cache::HubCache offline_cache("hub", offline_client);
  const auto requests = hub->requests().size();
  const auto offline = lock_project(offline_cache, ".", LockFormat::dependency);
  ASSERT_FALSE(offline);
  EXPECT_NE(offline.error().message.find("could not verify publisher trust status"), std::string::npos);
  const auto cached = lock_project(offline_cache, ".", LockFormat::dependency, RemoteCodeTrust{false, {"org/relu"}});
  ASSERT_TRUE(cached) << cached.error().message;
  EXPECT_EQ(cached->lock.entries.at(0).commit, hub->commit);
  EXPECT_EQ(hub->requests().size(), requests);
}

TEST(KernelLockProject, VerifiesCachedFilesAndNamesTamperedOnes) {
  auto hub = versioned_hub();
  const auto client = cache::testing::fake_client(hub);
  const cache::HubCache hub_cache("hub", client);
  const auto ref = cache::testing::kernel_ref();
  const auto snapshot = hub_cache.snapshot_download(ref, hub->commit, cache::PatternFilter(std::vector<std::string>{"build/*"}, {}));
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  const auto listing = hub_cache.listing(ref, hub->commit);
  ASSERT_TRUE(listing);
  KernelLockEntry entry{"org/relu", 1, std::nullopt, hub->commit, legacy_variant_locks(*listing)};
  const auto variant_path = snapshot->path / "build" / "torch-cpu";

  auto check = verify_locked_variant(hub_cache, entry, "torch-cpu", variant_path);
  ASSERT_TRUE(check) << check.error().message;
  EXPECT_TRUE(check->ok());
  EXPECT_EQ(check->expected_from, "kernels.lock");

  // Overwrite the cached blob behind the snapshot link.
  const auto blob = cache::RepoCache("hub", ref).blob_path(hub::git_blob_sha1("ops\n"));
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  ASSERT_TRUE(util::write_file_atomic(blob, "evil\n"));
  check = verify_locked_variant(hub_cache, entry, "torch-cpu", variant_path);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check->ok());
  EXPECT_NE(check->actual, check->expected);
  EXPECT_EQ(check->changed_files, std::vector<std::string>{"build/torch-cpu/relu/ops.py"});

  // Without a hash in the lock (the current format), the commit's listing is the reference.
  entry.variants.clear();
  check = verify_locked_variant(hub_cache, entry, "torch-cpu", variant_path);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->expected_from, "the tree listing");
  EXPECT_FALSE(check->ok());
}

}  // namespace
}  // namespace kernelhub::loader
