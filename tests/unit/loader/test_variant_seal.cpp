// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "loader_test_support.hpp"
#include <kernelhub/loader/variant_seal.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;

// A cache-shaped variant: blobs/<name> files and variant/ links to them, as a snapshot holds.
struct CachedVariant {
  fs::path root = fs::absolute("repo");
  fs::path variant = root / "snapshots" / "c0ffee" / "build" / "torch-cpu";
  fs::path seal = fs::absolute("seals") / "repo" / "c0ffee" / "torch-cpu";

  CachedVariant() {
    blob("aaaa", "x = 1\n");
    blob("bbbb", "{\"name\": \"relu\"}");
    blob("cccc", "y = 2\n");
    link("__init__.py", "aaaa");
    link("metadata.json", "bbbb");
    link("ops/__init__.py", "cccc");
  }

  fs::path blob(const std::string& name, const std::string& content) const {
    const auto path = root / "blobs" / name;
    testing::write(path, content);
    return path;
  }

  void link(const std::string& file, const std::string& blob_name) const {
    const auto path = variant / file;
    fs::create_directories(path.parent_path());
    fs::remove(path);
    fs::create_symlink(root / "blobs" / blob_name, path);
  }

  void sealed() const {
    const auto taken = VariantSeal::take(variant);
    ASSERT_TRUE(taken);
    write_seal(variant, seal, *taken, 0);
    ASSERT_TRUE(fs::exists(seal));
    ASSERT_TRUE(seal_holds(variant, seal));
    // A change in the seal's own clock tick would not show (what the settle time is for).
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
};

TEST(VariantSeal, RecordsTheFolderItsSubfoldersAndWhatEachLinkReaches) {
  CachedVariant cached;
  const auto seal = VariantSeal::take(cached.variant);
  ASSERT_TRUE(seal);
  std::vector<std::string> paths;
  for (const auto& entry : seal->entries) {
    paths.push_back(entry.relative_path + (entry.folder ? "/" : ""));
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (std::vector<std::string>{"./", "__init__.py", "metadata.json", "ops/",
                                             "ops/__init__.py"}));
  for (const auto& entry : seal->entries) {
    if (entry.relative_path == "metadata.json") {
      // The blob's size, not the link's.
      EXPECT_EQ(entry.size, static_cast<long long>(fs::file_size(cached.root / "blobs/bbbb")));
    }
  }
  EXPECT_EQ(VariantSeal::parse(seal->render()), seal);
}

TEST(VariantSeal, AnyChangeToTheFolderBreaksIt) {
  const std::vector<std::pair<std::string, std::function<void(const CachedVariant&)>>> changes = {
      {"a blob rewritten in place, its mtime put back",
       [](const CachedVariant& c) {
         const auto blob = c.root / "blobs" / "aaaa";
         const auto mtime = fs::last_write_time(blob);
         testing::write(blob, "x = 9\n");
         fs::last_write_time(blob, mtime);
       }},
      {"a link pointed at another blob of the same size",
       [](const CachedVariant& c) {
         c.blob("dddd", "z = 3\n");
         c.link("__init__.py", "dddd");
       }},
      {"a file added", [](const CachedVariant& c) { c.link("extra.py", "cccc"); }},
      {"a file added in a subfolder",
       [](const CachedVariant& c) { c.link("ops/extra.py", "cccc"); }},
      {"a file removed", [](const CachedVariant& c) { fs::remove(c.variant / "metadata.json"); }},
      {"a file renamed",
       [](const CachedVariant& c) {
         fs::rename(c.variant / "ops" / "__init__.py", c.variant / "ops" / "other.py");
       }},
      {"a blob replaced by a copy",
       [](const CachedVariant& c) {
         const auto blob = c.root / "blobs" / "bbbb";
         fs::copy_file(blob, c.root / "copy");
         fs::rename(c.root / "copy", blob);
       }},
      {"a mode changed",
       [](const CachedVariant& c) {
         fs::permissions(c.root / "blobs" / "cccc", fs::perms::owner_exec, fs::perm_options::add);
       }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    fs::remove_all("repo");
    fs::remove_all("seals");
    CachedVariant cached;
    cached.sealed();
    change(cached);
    EXPECT_FALSE(seal_holds(cached.variant, cached.seal));
  }
}

TEST(VariantSeal, BytecodeIsLeftOutAsTheDigestLeavesItOut) {
  CachedVariant cached;
  fs::create_directories(cached.variant / "__pycache__");
  cached.sealed();
  testing::write(cached.variant / "__pycache__" / "x.cpython-311.pyc", "bytecode");
  EXPECT_TRUE(seal_holds(cached.variant, cached.seal));
}

TEST(VariantSeal, IsNotWrittenForFilesChangedJustNowOrDuringTheChecks) {
  CachedVariant cached;
  const auto fresh = VariantSeal::take(cached.variant);
  ASSERT_TRUE(fresh);
  write_seal(cached.variant, cached.seal, *fresh);  // the default two seconds: too fresh
  EXPECT_FALSE(fs::exists(cached.seal));

  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  testing::write(cached.root / "blobs" / "aaaa", "x = 2\n");  // while the checks ran
  write_seal(cached.variant, cached.seal, *fresh, 0);
  EXPECT_FALSE(fs::exists(cached.seal));
}

TEST(VariantSeal, ALinkToAFolderCannotBeSealed) {
  CachedVariant cached;
  fs::create_directories("elsewhere");
  fs::create_directory_symlink(fs::absolute("elsewhere"), cached.variant / "hidden");
  EXPECT_FALSE(VariantSeal::take(cached.variant));
}

TEST(VariantSeal, ACutOrForeignSealDoesNotHold) {
  CachedVariant cached;
  cached.sealed();
  const auto text = *util::read_file(cached.seal);
  ASSERT_TRUE(util::write_file_atomic(cached.seal, text.substr(0, text.size() - 5)));
  EXPECT_FALSE(seal_holds(cached.variant, cached.seal));
  ASSERT_TRUE(util::write_file_atomic(cached.seal, "kernelhub-variant-seal 1\n"));
  EXPECT_FALSE(seal_holds(cached.variant, cached.seal));
  ASSERT_TRUE(util::write_file_atomic(cached.seal, "{}"));
  EXPECT_FALSE(seal_holds(cached.variant, cached.seal));
  EXPECT_FALSE(seal_holds(cached.variant, fs::absolute("missing")));
}

}  // namespace
}  // namespace kernelhub::loader
