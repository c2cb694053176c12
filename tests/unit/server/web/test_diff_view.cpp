// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/diff_view.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server::web {
namespace {

TEST(DiffView, ClassesEachLineByWhereItIs) {
  const std::string patch =
      "diff --git a/a.py b/a.py\n"
      "index 1..2 100644\n"
      "--- a/a.py\n"
      "+++ b/a.py\n"
      "@@ -1 +1 @@\n"
      "-x = 1\n"
      "+++y = '<b>'\n"
      " kept\n"
      "diff --git a/lib.so b/lib.so\n"
      "Binary files a/lib.so and b/lib.so differ\n";
  const std::string html = diff_html(patch);
  EXPECT_NE(html.find("<span class=\"file\">diff --git a/a.py b/a.py</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"meta\">+++ b/a.py</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"hunk\">@@ -1 +1 @@</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"del\">-x = 1</span>"), std::string::npos);
  // An added line that starts with "++" is an addition, not a header; its text is escaped.
  EXPECT_NE(html.find("<span class=\"add\">+++y = &#39;&lt;b&gt;&#39;</span>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("<span class=\"ctx\"> kept</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"meta\">Binary files a/lib.so and b/lib.so differ</span>"),
            std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
}

TEST(DiffView, AnEmptyPatchSaysNothingChanged) {
  EXPECT_NE(diff_html("").find("No file changed."), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::server::web
