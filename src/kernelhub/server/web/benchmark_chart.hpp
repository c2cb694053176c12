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
    // The mean of the workload's verify_<w> (the reference computation), when the result has
    // one (`timingResults.ref_mean_ms`, which kernelhub benchmark adds); 0 when not.
    double ref_mean_ms = 0;
  };
  std::vector<Workload> workloads;
};

// The results stored at `commit`, sorted by variant then device; files that are not such a
// result (another shape, too large, not JSON) are skipped.
HubExpected<std::vector<BenchmarkRun>> collect_benchmarks(
    const std::shared_ptr<git_repository>& repo, const std::string& commit);

// A self-contained SVG: one group of horizontal bars per workload (named with its class, as
// the results table and the local chart name it), one bar per (variant, device) run, its
// length the mean time, and where the run timed verify_<w> a grey bar of that time and the
// speed-up over it, with a legend. Every text is escaped. Empty when
// `runs` hold no workload.
std::string render_benchmark_svg(const std::vector<BenchmarkRun>& runs);

}  // namespace kernelhub::server::web
