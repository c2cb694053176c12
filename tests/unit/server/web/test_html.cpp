// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/html.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server::web {

namespace {

TEST(Html, EscapeCoversTextAndBothQuotes) {
  EXPECT_EQ(escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(escape("plain"), "plain");
}

TEST(Html, UrlPartsEncodeRevisionSlashesButPathsKeepThem) {
  EXPECT_EQ(url_part("refs/pr/1"), "refs%2Fpr%2F1");
  EXPECT_EQ(url_path("build/a b/<x>.py"), "build/a%20b/%3Cx%3E.py");
}

TEST(Html, HumanSizesUseDecimalUnits) {
  EXPECT_EQ(human_size(0), "0 B");
  EXPECT_EQ(human_size(999), "999 B");
  EXPECT_EQ(human_size(1500), "1.5 kB");
  EXPECT_EQ(human_size(12'300'000), "12.3 MB");
}

TEST(Html, TextIsValidUtf8WithoutNul) {
  EXPECT_TRUE(is_text("plain\n"));
  EXPECT_TRUE(is_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_text(std::string_view("a\0b", 3)));
  EXPECT_FALSE(is_text("\xc3"));          // cut short
  EXPECT_FALSE(is_text("\xc0\xaf"));      // overlong
  EXPECT_FALSE(is_text("\x80"));          // a continuation byte first
  EXPECT_FALSE(is_text("\x7f" "ELF\xff"));
}

TEST(Html, UtcTime) { EXPECT_EQ(utc_time(0), "1970-01-01 00:00 UTC"); }

}  // namespace

}  // namespace kernelhub::server::web
