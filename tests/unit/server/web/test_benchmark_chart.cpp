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
  cpu.workloads = {{"B.small", 1.0, 0.1, 10}, {"B.large", 4.0, 0.2, 10}};
  BenchmarkRun gpu{"torch215-cxx11-cu128-x86_64-linux", "cuda-h100", "H100", "q", {}};
  gpu.workloads = {{"B.large", 2.0, 0.1, 10}};
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
  run.workloads = {{"W.<script>", 1.0, 0, 1}};
  const std::string svg = render_benchmark_svg({run});
  EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<gpu>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos) << svg;
  EXPECT_NE(svg.find("v&lt;1&gt; · d&amp;&quot;x&quot;"), std::string::npos) << svg;
}

TEST(BenchmarkChart, NothingToDrawIsEmpty) {
  EXPECT_EQ(render_benchmark_svg({}), "");
  EXPECT_EQ(render_benchmark_svg({BenchmarkRun{"v", "d", "", "p", {}}}), "");
}

}  // namespace

}  // namespace kernelhub::server::web
