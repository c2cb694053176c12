// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/benchmark_chart.hpp>

#include <regex>

#include <gtest/gtest.h>

namespace kernelhub::server::web {

namespace {

std::vector<double> bar_widths(const std::string& svg) {
  static const std::regex k_bar(R"re(<rect class="bar"[^>]* width="([0-9.]+)")re");
  std::vector<double> widths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), k_bar); it != std::sregex_iterator();
       ++it) {
    widths.push_back(std::stod((*it)[1]));
  }
  return widths;
}

TEST(BenchmarkChart, OneBarPerRunAndWorkloadScaledToTheSlowest) {
  BenchmarkRun cpu{"torch215-cxx11-cpu-x86_64-linux", "cpu-x", "Test CPU (CPU)", "p", {}};
  cpu.workloads = {{"B.small", 1.0, 0.1, 10, 0}, {"B.large", 4.0, 0.2, 10, 0}};
  BenchmarkRun gpu{"torch215-cxx11-cu128-x86_64-linux", "cuda-h100", "H100", "q", {}};
  gpu.workloads = {{"B.large", 2.0, 0.1, 10, 0}};
  const std::string svg = render_benchmark_svg({cpu, gpu});
  ASSERT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")) << svg;
  const auto widths = bar_widths(svg);
  // small: cpu only; large: cpu then gpu.
  ASSERT_EQ(widths.size(), 3u) << svg;
  EXPECT_NEAR(widths[1], 4 * widths[0], 0.2);
  EXPECT_NEAR(widths[1], 2 * widths[2], 0.2);
  EXPECT_NE(svg.find("cuda-h100"), std::string::npos);
}

TEST(BenchmarkChart, TextFromTheResultIsEscaped) {
  BenchmarkRun run{"v<1>", "d&\"x\"", "<gpu>", "p", {}};
  run.workloads = {{"W.<script>", 1.0, 0, 1, 0}};
  const std::string svg = render_benchmark_svg({run});
  EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<gpu>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos) << svg;
  EXPECT_NE(svg.find("v&lt;1&gt; · d&amp;&quot;x&quot;"), std::string::npos) << svg;
}

// Issue 22 §6: the hub's chart dropped the class names and the reference time and speed-up that
// the local chart (kernelhub benchmark --visual) shows.
TEST(BenchmarkChart, NamesTheClassAndDrawsTheReferenceWithTheSpeedup) {
  BenchmarkRun run{"torch-cpu", "cpu-x", "CPU", "p", {}};
  run.workloads = {{"ReluBenchmark.large", 2.0, 0.1, 10, 5.0},
                   {"OtherBenchmark.large", 1.0, 0.1, 10, 0}};
  const std::string svg = render_benchmark_svg({run});
  EXPECT_NE(svg.find(">ReluBenchmark.large</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">OtherBenchmark.large</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("2.00 ms (2.50x the reference)"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">5.00 ms reference</text>"), std::string::npos) << svg;
  static const std::regex k_ref_bar(R"re(<rect class="ref-bar"[^>]* width="([0-9.]+)")re");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(svg, match, k_ref_bar)) << svg;
  // The reference bar is 2.5 times the kernel's: both on one scale.
  EXPECT_NEAR(std::stod(match[1]), 2.5 * bar_widths(svg).at(0), 0.5);
}

TEST(BenchmarkChart, NothingToDrawIsEmpty) {
  EXPECT_EQ(render_benchmark_svg({}), "");
  EXPECT_EQ(render_benchmark_svg({BenchmarkRun{"v", "d", "", "p", {}}}), "");
}

}  // namespace

}  // namespace kernelhub::server::web
