// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/job_limit.hpp>

#include <algorithm>
#include <charconv>
#include <thread>

#include <sched.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

unsigned job_limit(unsigned cores, std::optional<std::uint64_t> available_memory,
                   CompilerKind kind) {
  unsigned limit = std::max(cores, 1U);
  if (available_memory) {
    const auto per_job = kind == CompilerKind::device ? k_device_job_memory : k_cxx_job_memory;
    const auto fits = *available_memory / per_job;
    limit = static_cast<unsigned>(std::min<std::uint64_t>(limit, fits));
  }
  return std::max(limit, 1U);
}

unsigned nvcc_threads(unsigned device_jobs, std::size_t cuda_sources, std::size_t archs) {
  const auto share = device_jobs / std::max<std::size_t>(cuda_sources, 1);
  return static_cast<unsigned>(std::max<std::size_t>(std::min(share, archs), 1));
}

std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view k_key = "MemAvailable:";
  std::size_t at = 0;
  while (at < meminfo.size()) {
    auto end = meminfo.find('\n', at);
    if (end == std::string_view::npos) {
      end = meminfo.size();
    }
    auto line = meminfo.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(k_key)) {
      continue;
    }
    line.remove_prefix(k_key.size());
    line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    std::uint64_t kib = 0;
    const auto [rest, error] = std::from_chars(line.data(), line.data() + line.size(), kib);
    if (error != std::errc() || std::string_view(rest, line.data() + line.size()) != " kB") {
      return std::nullopt;
    }
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> available_memory() {
  const auto text = util::read_file("/proc/meminfo");
  return text ? parse_mem_available(*text) : std::nullopt;
}

unsigned available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace kernelhub::builder
