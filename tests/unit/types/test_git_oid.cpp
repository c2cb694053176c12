// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/git_oid.hpp>

using kernelhub::types::GitOid;

TEST(GitOid, AcceptsFullSha1AndSha256Lowercased) {
  const std::string sha1 = "d0610aa58db33b142c86b59598a2a1c730f52996";
  const std::string sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  EXPECT_EQ(GitOid::parse(sha1)->str(), sha1);
  EXPECT_EQ(GitOid::parse(sha256)->str(), sha256);
  EXPECT_EQ(GitOid::parse("D0610AA58DB33B142C86B59598A2A1C730F52996")->str(), sha1);
}

TEST(GitOid, RejectsAbbreviatedAndNonHex) {
  const std::string sha1 = "d0610aa58db33b142c86b59598a2a1c730f52996";
  for (const auto& bad : {std::string(), std::string("d0610aa"), sha1.substr(0, 39), sha1 + "0",
                          std::string(40, 'z'), sha1.substr(0, 39) + " "}) {
    EXPECT_FALSE(GitOid::parse(bad)) << bad;
  }
  EXPECT_EQ(GitOid::parse("abc").error().message,
            "invalid git object id \"abc\": expected 40 or 64 hexadecimal digits");
}
