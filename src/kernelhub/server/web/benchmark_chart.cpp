// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/benchmark_chart.hpp>

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/web/html.hpp>

namespace kernelhub::server::web {

namespace {

using nlohmann::json;

// A result is a few kB; these bound what one page load reads and draws.
constexpr std::uint64_t k_max_result_bytes = std::uint64_t{1} << 20;
constexpr std::size_t k_max_runs = 32;

// Chart geometry, in SVG user units.
constexpr int k_width = 760;
constexpr int k_label_width = 190;
constexpr int k_value_width = 250;
constexpr int k_bar_height = 14;
constexpr int k_bar_gap = 4;
constexpr int k_group_gap = 14;
constexpr int k_legend_row = 18;
constexpr int k_margin = 10;

// Colours that read on both light and dark backgrounds; series cycle through them.
constexpr const char* k_reference_colour = "#9ca3af";
constexpr std::array<const char*, 6> k_palette = {"#4c72b0", "#dd8452", "#55a868",
                                                  "#c44e52", "#8172b3", "#937860"};

std::string machine_label(const json& info) {
  if (!info.is_object()) {
    return "";
  }
  const auto text = [&](const char* key) {
    const auto it = info.find(key);
    return it != info.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string device = text("gpu");
  if (device.empty() || device == "N/A") {
    device = text("cpu");
  }
  const std::string backend = text("backend");
  if (device.empty()) {
    return backend;
  }
  return backend.empty() ? device : fmt::format("{} ({})", device, backend);
}

std::optional<BenchmarkRun> parse_run(std::string_view text) {
  const json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) {
    return std::nullopt;
  }
  const auto results = doc.find("results");
  if (results == doc.end() || !results->is_array()) {
    return std::nullopt;
  }
  BenchmarkRun run;
  for (const auto& entry : *results) {
    if (!entry.is_object()) {
      continue;
    }
    const auto name = entry.find("workload");
    const auto timing = entry.find("timingResults");
    if (name == entry.end() || !name->is_string() || timing == entry.end() ||
        !timing->is_object()) {
      continue;
    }
    const auto mean = timing->find("mean_ms");
    if (mean == timing->end() || !mean->is_number() || !std::isfinite(mean->get<double>()) ||
        mean->get<double>() < 0) {
      continue;
    }
    BenchmarkRun::Workload workload{name->get<std::string>(), mean->get<double>(), 0, 0, 0};
    if (const auto std_ms = timing->find("std_ms"); std_ms != timing->end() && std_ms->is_number()) {
      workload.std_ms = std_ms->get<double>();
    }
    if (const auto n = timing->find("iterations"); n != timing->end() && n->is_number_integer()) {
      workload.iterations = n->get<int>();
    }
    if (const auto ref = timing->find("ref_mean_ms"); ref != timing->end() && ref->is_number() &&
        std::isfinite(ref->get<double>()) && ref->get<double>() > 0) {
      workload.ref_mean_ms = ref->get<double>();
    }
    run.workloads.push_back(std::move(workload));
  }
  if (run.workloads.empty()) {
    return std::nullopt;
  }
  run.machine = machine_label(doc.value("machineInfo", json()));
  return run;
}

std::string format_ms(double ms) {
  if (ms >= 100) {
    return fmt::format("{:.0f} ms", ms);
  }
  if (ms >= 1) {
    return fmt::format("{:.2f} ms", ms);
  }
  return fmt::format("{:.4f} ms", ms);
}

}  // namespace

HubExpected<std::vector<BenchmarkRun>> collect_benchmarks(
    const std::shared_ptr<git_repository>& repo, const std::string& commit) {
  auto files = list_tree(repo.get(), commit, "benchmarks", Recursive::yes, Sizes::read);
  if (!files) {
    if (files.error().status == 404) {
      return std::vector<BenchmarkRun>{};
    }
    return tl::unexpected(files.error());
  }
  std::vector<BenchmarkRun> runs;
  for (const auto& file : *files) {
    // benchmarks/<variant>/<device>.json: exactly three parts.
    const std::string& path = file.path;
    const std::size_t first = path.find('/');
    const std::size_t second = path.find('/', first + 1);
    if (file.is_directory || second == std::string::npos ||
        path.find('/', second + 1) != std::string::npos || !path.ends_with(".json") ||
        file.size > k_max_result_bytes || runs.size() == k_max_runs) {
      continue;
    }
    auto content = read_file(repo, commit, path, Content::bytes);
    if (!content) {
      continue;
    }
    auto run = parse_run(std::string_view(content->data, content->size));
    if (!run) {
      continue;
    }
    run->variant = path.substr(first + 1, second - first - 1);
    run->device = path.substr(second + 1, path.size() - second - 1 - 5);
    run->path = path;
    runs.push_back(std::move(*run));
  }
  std::sort(runs.begin(), runs.end(), [](const BenchmarkRun& a, const BenchmarkRun& b) {
    return std::tie(a.variant, a.device) < std::tie(b.variant, b.device);
  });
  return runs;
}

std::string render_benchmark_svg(const std::vector<BenchmarkRun>& runs) {
  // Workloads in first-seen order, so every run's bars line up under the same heading.
  std::vector<std::string> workloads;
  double longest = 0;
  for (const auto& run : runs) {
    for (const auto& workload : run.workloads) {
      if (std::find(workloads.begin(), workloads.end(), workload.name) == workloads.end()) {
        workloads.push_back(workload.name);
      }
      longest = std::max({longest, workload.mean_ms, workload.ref_mean_ms});
    }
  }
  if (workloads.empty()) {
    return "";
  }
  const int bar_area = k_width - k_label_width - k_value_width - 2 * k_margin;
  const int legend_height = static_cast<int>(runs.size()) * k_legend_row + k_margin;
  const auto bars_of = [](const BenchmarkRun& run, const std::string& name) {
    const auto it = std::find_if(run.workloads.begin(), run.workloads.end(),
                                 [&](const BenchmarkRun::Workload& w) { return w.name == name; });
    return it == run.workloads.end() ? 0 : it->ref_mean_ms > 0 ? 2 : 1;
  };
  int bar_rows = 0;
  for (const auto& name : workloads) {
    for (const auto& run : runs) {
      bar_rows += std::max(1, bars_of(run, name));
    }
  }
  const int height = k_margin + legend_height + bar_rows * (k_bar_height + k_bar_gap) +
                     static_cast<int>(workloads.size()) * k_group_gap + k_margin;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"benchmark-chart\" role=\"img\" "
      "viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" "
      "font-family=\"system-ui,sans-serif\" font-size=\"12\">\n"
      "<title>Mean time per workload, by variant and device (shorter is faster)</title>\n",
      k_width, height);
  int y = k_margin;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    const std::string label = fmt::format("{} · {}{}", run.variant, run.device,
                                          run.machine.empty() ? "" : " · " + run.machine);
    svg += fmt::format(
        "<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" fill=\"currentColor\">{}</text></g>\n",
        k_margin, y, k_palette[i % k_palette.size()], k_margin + 18, y + 10, escape(label));
    y += k_legend_row;
  }
  const bool any_reference = std::any_of(runs.begin(), runs.end(), [](const BenchmarkRun& run) {
    return std::any_of(run.workloads.begin(), run.workloads.end(),
                       [](const BenchmarkRun::Workload& w) { return w.ref_mean_ms > 0; });
  });
  if (any_reference) {
    svg += fmt::format(
        "<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" fill=\"currentColor\">reference (verify_*), above its "
        "run</text></g>\n",
        k_margin, y, k_reference_colour, k_margin + 18, y + 10);
    y += k_legend_row;
  }
  y += k_margin;
  const double scale = longest > 0 ? bar_area / longest : 0;
  for (const auto& name : workloads) {
    svg += fmt::format("<g class=\"workload\"><text x=\"{}\" y=\"{}\" fill=\"currentColor\" "
                       "font-weight=\"600\">{}</text>\n",
                       k_margin, y + k_bar_height - 2, escape(name));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto& run = runs[i];
      const auto it = std::find_if(run.workloads.begin(), run.workloads.end(),
                                   [&](const BenchmarkRun::Workload& w) { return w.name == name; });
      if (it != run.workloads.end() && it->ref_mean_ms > 0) {
        const double ref_length = std::max(1.0, it->ref_mean_ms * scale);
        svg += fmt::format(
            "<rect class=\"ref-bar\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
            "fill=\"{}\"><title>{}: verify_* {} ({} · {})</title></rect>"
            "<text x=\"{:.1f}\" y=\"{}\" fill=\"currentColor\">{} reference</text>\n",
            k_label_width, y, ref_length, k_bar_height, k_reference_colour, escape(name),
            format_ms(it->ref_mean_ms), escape(run.variant), escape(run.device),
            k_label_width + ref_length + 6, y + k_bar_height - 3, format_ms(it->ref_mean_ms));
        y += k_bar_height + k_bar_gap;
      }
      if (it != run.workloads.end()) {
        const std::string speedup =
            it->ref_mean_ms > 0 && it->mean_ms > 0
                ? fmt::format(" ({:.2f}x the reference)", it->ref_mean_ms / it->mean_ms)
                : std::string();
        // At least one unit wide, so a very fast run still shows a bar.
        const double length = std::max(1.0, it->mean_ms * scale);
        svg += fmt::format(
            "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
            "<title>{}: {} ± {} over {} iterations ({} · {})</title></rect>"
            "<text x=\"{:.1f}\" y=\"{}\" fill=\"currentColor\">{}</text>\n",
            k_label_width, y, length, k_bar_height, k_palette[i % k_palette.size()],
            escape(name), format_ms(it->mean_ms), format_ms(it->std_ms), it->iterations,
            escape(run.variant), escape(run.device), k_label_width + length + 6,
            y + k_bar_height - 3, format_ms(it->mean_ms) + speedup);
      }
      y += k_bar_height + k_bar_gap;
    }
    svg += "</g>\n";
    y += k_group_gap;
  }
  return svg + "</svg>\n";
}

}  // namespace kernelhub::server::web
