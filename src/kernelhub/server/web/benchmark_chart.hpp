// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

struct git_repository;

namespace kernelhub::server::web {

// One uploaded result, `benchmarks/<variant>/<device>.json` (the JSON of `kernelhub benchmark
// --upload`, the reference `kernels benchmark`'s shape).
struct BenchmarkRun {
  std::string variant;
  std::string device;   // the file name without .json
  std::string machine;  // machineInfo's gpu or cpu, and backend: "NVIDIA H100 (CUDA 12.8)"
  std::string path;     // the file in the repository
  struct Workload {
    std::string name;
    double mean_ms = 0;
    double std_ms = 0;
    int iterations = 0;
  };
  std::vector<Workload> workloads;
};

// The results stored at `commit`, sorted by variant then device; files that are not such a
// result (another shape, too large, not JSON) are skipped.
HubExpected<std::vector<BenchmarkRun>> collect_benchmarks(
    const std::shared_ptr<git_repository>& repo, const std::string& commit);

// A self-contained SVG: one group of horizontal bars per workload, one bar per (variant,
// device) run, its length the mean time, with a legend. Every text is escaped. Empty when
// `runs` hold no workload.
std::string render_benchmark_svg(const std::vector<BenchmarkRun>& runs);

}  // namespace kernelhub::server::web
