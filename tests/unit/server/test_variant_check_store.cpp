// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/variant_check_store.hpp>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

const std::string k_tree = "0123456789abcdef0123456789abcdef01234567";

VariantCheckRecord sample_record() {
  VariantCheckRecord record;
  record.tree = k_tree;
  record.commit = std::string(40, 'c');
  record.origin = VariantCheckRecord::Origin::upload;
  record.keys = {"hintA=", "hintB="};
  record.integrity.digest_matches = false;
  record.integrity.digest_detail = "File hash mismatch for \xff.py: expected: x, got: y";
  record.integrity.signed_ = true;
  record.integrity.signature_valid = true;
  record.integrity.signature_detail = "key hintA=";
  return record;
}

TEST(VariantCheckStore, RecordsRoundTripUnderTheRepositoryFolder) {
  const auto repo = std::filesystem::current_path() / "k.git";
  const VariantCheckStore store(repo);
  EXPECT_FALSE(store.find(k_tree));
  VariantCheckRecord record = sample_record();
  ASSERT_TRUE(store.save(record));
  EXPECT_EQ(store.path_of(k_tree), repo / "kernelhub" / "variant-checks" / (k_tree + ".json"));
  EXPECT_TRUE(std::filesystem::is_regular_file(store.path_of(k_tree)));
  // Bytes that are not UTF-8 are written as U+FFFD rather than failing the record.
  record.integrity.digest_detail = "File hash mismatch for \xEF\xBF\xBD.py: expected: x, got: y";
  EXPECT_EQ(store.find(k_tree), record);

  record.origin = VariantCheckRecord::Origin::page_view;
  record.integrity.digest_matches.reset();
  record.integrity.signed_ = false;
  record.integrity.signature_valid.reset();
  ASSERT_TRUE(store.save(record));
  EXPECT_EQ(store.find(k_tree), record);
  // Only the record file is left: the temporary file was renamed over it.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(repo / "kernelhub" / "variant-checks")) {
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST(VariantCheckStore, DamagedOrForeignRecordsCountAsNone) {
  const VariantCheckStore store(std::filesystem::current_path() / "k.git");
  ASSERT_TRUE(store.save(sample_record()));
  const auto path = store.path_of(k_tree);
  for (const std::string text :
       {std::string("{\"format\": 1, \"tree\": \""), std::string("[]"),
        std::string("{\"format\": 2}"),
        // Another tree's record under this name.
        std::string("{\"format\": 1, \"tree\": \"" + std::string(40, 'e') +
                    "\", \"commit\": \"c\", \"origin\": \"upload\", \"keys\": [], "
                    "\"digest\": {\"matches\": true, \"detail\": \"\"}, \"signed\": false, "
                    "\"signature\": {\"valid\": null, \"detail\": \"\"}}"),
        std::string("{\"format\": 1, \"tree\": \"" + k_tree +
                    "\", \"commit\": \"c\", \"origin\": \"later\", \"keys\": [], "
                    "\"digest\": {\"matches\": true, \"detail\": \"\"}, \"signed\": false, "
                    "\"signature\": {\"valid\": null, \"detail\": \"\"}}"),
        std::string("{\"format\": 1, \"tree\": \"" + k_tree +
                    "\", \"commit\": \"c\", \"origin\": \"upload\", \"keys\": [], "
                    "\"digest\": {\"matches\": \"yes\", \"detail\": \"\"}, \"signed\": false, "
                    "\"signature\": {\"valid\": null, \"detail\": \"\"}}")}) {
    std::ofstream(path, std::ios::trunc) << text;
    EXPECT_FALSE(store.find(k_tree)) << text;
  }
  // Names that are not tree ids never reach the file system.
  EXPECT_FALSE(store.find("../../config"));
  VariantCheckRecord odd = sample_record();
  odd.tree = "../x";
  EXPECT_FALSE(store.save(odd));
}

}  // namespace

}  // namespace kernelhub::server
