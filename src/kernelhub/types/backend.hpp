// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// Every backend a kernel may target, in the reference's kebab-case spelling.
enum class Backend { cann, cpu, cuda, metal, neuron, rocm, tpu, xpu };

inline constexpr std::array<Backend, 8> k_all_backends = {
    Backend::cann, Backend::cpu,  Backend::cuda, Backend::metal,
    Backend::neuron, Backend::rocm, Backend::tpu,  Backend::xpu};

inline constexpr std::array<std::string_view, 8> k_backend_names = {
    "cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu"};

std::string_view to_string(Backend backend);
// Case-insensitive, as the reference's `Backend::from_str` (build.toml, CLI flags); the error
// carries a hint.
util::Expected<Backend> parse_backend(std::string_view text);
// Exact kebab-case spelling only, as serde reads a backend in metadata.json: "cuda", not "CUDA".
std::optional<Backend> backend_from_name(std::string_view name);

// Backends that compile native code with a [kernel.*] section; the others are noarch only.
bool has_native_kernels(Backend backend);

}  // namespace kernelhub::types
