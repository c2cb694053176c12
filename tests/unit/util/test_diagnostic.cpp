// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/util/diagnostic.hpp>

using namespace kernelhub::util;

TEST(Diagnostic, RendersLocationSourceLineCaretAndHint) {
  Diagnostic d{Severity::error, {"build.toml", 3, 14}, "unknown backend \"cudaa\"",
               "did you mean \"cuda\"?", "backends = [\"cudaa\"]"};
  EXPECT_EQ(render(d),
            "build.toml:3:14: error: unknown backend \"cudaa\"\n"
            " 3 | backends = [\"cudaa\"]\n"
            "   |              ^\n"
            "  hint: did you mean \"cuda\"?\n");
}

TEST(Diagnostic, RenderHintsOnceShowsEachHintTheFirstTime) {
  const std::vector<Diagnostic> found = {
      {Severity::error, {}, "symbol a", "use the stable ABI", {}},
      {Severity::error, {}, "symbol b", "use the stable ABI", {}},
      {Severity::error, {}, "symbol c", "another fix", {}}};
  EXPECT_EQ(render_hints_once(found),
            "error: symbol a\n  hint: use the stable ABI\n"
            "error: symbol b\n"
            "error: symbol c\n  hint: another fix\n");
}

TEST(Diagnostic, RendersWithoutLocation) {
  Diagnostic d{Severity::warning, {}, "something odd", {}, {}};
  EXPECT_EQ(render(d), "warning: something odd\n");
}

TEST(Diagnostic, CollectorSortsByPositionAndDropsDuplicates) {
  DiagnosticCollector sink;
  sink.error({"b.toml", 1, 1}, "late file");
  sink.error({"a.toml", 9, 2}, "second");
  sink.error({"a.toml", 2, 5}, "first");
  sink.error({"a.toml", 2, 5}, "first");
  sink.warning({"a.toml", 1, 1}, "only a warning");
  auto sorted = sink.sorted();
  ASSERT_EQ(sorted.size(), 4u);
  EXPECT_EQ(sorted[0].message, "only a warning");
  EXPECT_EQ(sorted[1].message, "first");
  EXPECT_EQ(sorted[2].message, "second");
  EXPECT_EQ(sorted[3].message, "late file");
  EXPECT_TRUE(sink.has_errors());
}

TEST(Diagnostic, LineOfHandlesEdges) {
  EXPECT_EQ(line_of("a\r\nb\nc", 1), "a");
  EXPECT_EQ(line_of("a\nb\nc", 3), "c");
  EXPECT_EQ(line_of("a\nb\nc", 4), "");
  EXPECT_EQ(line_of("a", 0), "");
}
