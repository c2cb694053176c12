// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

// How many compile jobs a build runs at once: as many as there are cores, but no more than
// the free memory can hold, since an nvcc or a heavily templated Torch translation unit can
// use gigabytes and a machine that swaps builds slower than one that runs fewer jobs.
namespace kernelhub::builder {

// The kind of compiler a build runs: nvcc (and hipcc, icpx) jobs need far more memory.
enum class CompilerKind { cxx, device };

inline constexpr std::uint64_t k_gib = 1024ULL * 1024 * 1024;
// Memory kept free per job. A C++ job that includes torch/all.h peaks near 1 GiB; nvcc runs
// cicc and ptxas per architecture and peaks near 2 GiB.
inline constexpr std::uint64_t k_cxx_job_memory = 1 * k_gib;
inline constexpr std::uint64_t k_device_job_memory = 2 * k_gib;

// min(cores, available memory / memory per job), at least 1. Unknown memory leaves only the
// core count.
unsigned job_limit(unsigned cores, std::optional<std::uint64_t> available_memory,
                   CompilerKind kind);

// How many archs one nvcc compiles at once (`--threads`): nvcc runs each arch's device
// compile (preprocessor, cicc, ptxas) one after the other, so a variant with one .cu file and
// many archs keeps one core busy while ninja has nothing else to run. The device job budget
// is shared among the variant's .cu sources (ninja may run them all at once), never more than
// the archs there are, at least 1.
unsigned nvcc_threads(unsigned device_jobs, std::size_t cuda_sources, std::size_t archs);

// MemAvailable of /proc/meminfo text, in bytes; nullopt when absent or malformed.
std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo);

// This machine's MemAvailable (Linux), or nullopt.
std::optional<std::uint64_t> available_memory();

// The cores this process may run on (the affinity mask, as ninja's default does), at least 1.
unsigned available_cores();

}  // namespace kernelhub::builder
