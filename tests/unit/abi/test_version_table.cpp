// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/version_table.hpp>

#include <gtest/gtest.h>

namespace kernelhub::abi {
namespace {

TEST(VersionTable, ParsesColumnsAndSkipsComments) {
  auto table = VersionTable::parse("# header\nPyA\tfunction\t3.10\n\nPyB\tdata\t3.2\n", 2);
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_EQ(table->size(), 2u);
  EXPECT_EQ(*table->find("PyA"), *types::Version::parse("3.10"));
  EXPECT_EQ(table->find("PyC"), nullptr);
}

TEST(VersionTable, ErrorsNameTheLine) {
  auto short_row = VersionTable::parse("# c\nname\t2.10\n", 2);
  ASSERT_FALSE(short_row);
  EXPECT_EQ(short_row.error().message, "line 2: expected at least 3 tab-separated columns");
  EXPECT_FALSE(VersionTable::parse("f\tx.y\n", 1));
}

}  // namespace
}  // namespace kernelhub::abi
