// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/url.hpp>

using kernelhub::types::parse_url;

namespace {

// The serialisation, or "<failure>"; expectations are what the reference (Rust `url` crate)
// gives, checked through kernels_data.
std::string href(std::string_view input) {
  const auto url = parse_url(input);
  return url ? url->serialize() : "<failure>";
}

}  // namespace

TEST(Url, SpecialSchemesGetHostsPathsAndDefaultPorts) {
  EXPECT_EQ(href("HTTPS://GitHub.COM/a/b"), "https://github.com/a/b");
  EXPECT_EQ(href("https://github.com"), "https://github.com/");
  EXPECT_EQ(href("https://h:443/x"), "https://h/x");
  EXPECT_EQ(href("http://h:0080/x"), "http://h/x");
  EXPECT_EQ(href("https:x"), "https://x/");
  EXPECT_EQ(href("https:///x"), "https://x/");
  EXPECT_EQ(href("https://h\\x\\y"), "https://h/x/y");
  EXPECT_EQ(href(" https://h/x \n"), "https://h/x");
  EXPECT_EQ(href("https://h/a\tb"), "https://h/ab");
}

TEST(Url, ResolvesDotSegments) {
  EXPECT_EQ(href("https://h/./a/../b"), "https://h/b");
  EXPECT_EQ(href("https://h/a/.."), "https://h/");
  EXPECT_EQ(href("https://h/a/."), "https://h/a/");
  EXPECT_EQ(href("https://h/%2e%2E/x"), "https://h/x");
  EXPECT_EQ(href("ssh:/../x"), "ssh:/x");
  EXPECT_EQ(href("ssh:/.//x"), "ssh:/.//x");
}

TEST(Url, NonSpecialSchemesKeepOpaqueHostsAndPaths) {
  EXPECT_EQ(href("ssh://GitHub.com/x"), "ssh://GitHub.com/x");
  EXPECT_EQ(href("git://"), "git://");
  EXPECT_EQ(href("ssh:///x"), "ssh:///x");
  EXPECT_EQ(href("ssh:a b"), "ssh:a b");
  EXPECT_EQ(href("ssh://h/a\\b"), "ssh://h/a\\b");
  EXPECT_EQ(href("ssh://h:22\\y"), "ssh://h:22/\\y");
  EXPECT_EQ(href("ssh://h:0022/x"), "ssh://h:22/x");
  EXPECT_EQ(href("ssh://h?a'b"), "ssh://h?a'b");
  EXPECT_EQ(href("git://@"), "git://");  // but "git://@/" and "git://u@" fail
  EXPECT_FALSE(parse_url("git://@/"));
  EXPECT_FALSE(parse_url("git://u@"));
}

TEST(Url, PercentEncodesPerComponent) {
  EXPECT_EQ(href("https://h/a b\"<>`{}^|"), "https://h/a%20b%22%3C%3E%60%7B%7D^|");
  EXPECT_EQ(href("https://h?a'b c#f g"), "https://h/?a%27b%20c#f%20g");
  EXPECT_EQ(href("ssh://u:p:q@h/x"), "ssh://u:p%3Aq@h/x");
  EXPECT_EQ(href("ssh://u@v@h/x"), "ssh://u%40v@h/x");
  EXPECT_EQ(href("https://:@h/"), "https://h/");
  EXPECT_EQ(href("https://h/\xC3\xA9"), "https://h/%C3%A9");
}

TEST(Url, ParsesHosts) {
  EXPECT_EQ(href("https://0x7f.1/x"), "https://127.0.0.1/x");
  EXPECT_EQ(href("https://1.2.3/"), "https://1.2.0.3/");
  EXPECT_EQ(href("https://%41.com/"), "https://a.com/");
  EXPECT_EQ(href("https://[1:0:0:0:0:0:0:1]/"), "https://[1::1]/");
  EXPECT_EQ(href("https://[::ffff:1.2.3.4]/"), "https://[::ffff:102:304]/");
  EXPECT_EQ(href("https://[0:0::1:0:0]/"), "https://[::1:0:0]/");
  EXPECT_EQ(href("https://b\xC3\xBC" "cher.de/x"), "https://xn--bcher-kva.de/x");
  EXPECT_EQ(href("https://xn--bcher-kva.de/"), "https://xn--bcher-kva.de/");
}

TEST(Url, Failures) {
  for (const auto* bad : {"", "not a url", "1http://h", "https://", "https://a b/", "https://a%20b/",
                          "https://999.1.1.1/", "https://1.2.3.09/", "https://x.09/",
                          "https://0x100000000/", "https://1.2.3.4.5/", "https://xn--zz.de/",
                          "git://:22/x", "ssh://u@/x", "ssh://h:99999/x", "ssh://h:22x/y",
                          "ssh://[1:2]/", "ssh://[v1.x]/", "ssh://h\\y", "https://h:x/"}) {
    EXPECT_FALSE(parse_url(bad)) << bad;
  }
}
