// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/git_url.hpp>

using kernelhub::types::GitUrl;

TEST(GitUrl, AcceptsNetworkSchemes) {
  for (auto good : {"https://github.com/huggingface/kernels", "git+ssh://git@host/repo.git",
                    "git://host/x", "http://host:8080/x"}) {
    auto url = GitUrl::parse(good);
    ASSERT_TRUE(url) << good;
    EXPECT_EQ(url->original(), good);
  }
}

TEST(GitUrl, NormalisesScpLikeToSsh) {
  auto url = GitUrl::parse("git@github.com:huggingface/kernels.git");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->normalized(), "ssh://git@github.com/huggingface/kernels.git");
  EXPECT_EQ(url->original(), "git@github.com:huggingface/kernels.git");
}

TEST(GitUrl, RejectsOtherSchemesWithTheList) {
  auto url = GitUrl::parse("ftp://host/x");
  ASSERT_FALSE(url);
  EXPECT_EQ(url.error().message,
            "unsupported scheme \"ftp\" in git URL \"ftp://host/x\", expected one of: https, http, "
            "git, ssh, git+ssh, git+https, git+http");
  EXPECT_FALSE(GitUrl::parse("not a url"));
  EXPECT_FALSE(GitUrl::parse("https://"));
}

TEST(GitUrl, FollowsTheReferenceOnEdgeCases) {
  // Values checked against kernels_data (tests/e2e/test_metadata_differential.py has more).
  EXPECT_EQ(GitUrl::parse("HTTPS://GitHub.com").value().normalized(), "https://github.com/");
  EXPECT_EQ(GitUrl::parse("ssh:foo").value().normalized(), "ssh:foo");
  EXPECT_EQ(GitUrl::parse("1host:path").value().normalized(), "ssh://1host/path");
  EXPECT_EQ(GitUrl::parse("@host:x").value().normalized(), "ssh://host/x");
  EXPECT_EQ(GitUrl::parse("a@b@c:d").value().normalized(), "ssh://a%40b@c/d");
  // "github.com" is a valid URL scheme, so this is not read as scp-like.
  EXPECT_EQ(GitUrl::parse("github.com:org/repo").error().message,
            "unsupported scheme \"github.com\" in git URL \"github.com:org/repo\", expected one of: "
            "https, http, git, ssh, git+ssh, git+https, git+http");
  for (auto bad : {"git@:x", "git@github.com:/abs", "git@h :x", "git@github.com:", "file:///x"}) {
    EXPECT_FALSE(GitUrl::parse(bad)) << bad;
  }
}
