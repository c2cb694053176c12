// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/cuda_toolkit.hpp>

#include <cctype>
#include <regex>
#include <string>

#include <fmt/format.h>

namespace kernelhub::builder {

namespace fs = std::filesystem;

std::optional<fs::path> find_nvcc(CommandRunner& runner, std::optional<std::string_view> cuda_home) {
  if (auto found = runner.find_program("nvcc")) {
    return fs::absolute(*found);
  }
  std::vector<fs::path> candidates;
  if (cuda_home && !cuda_home->empty()) {
    candidates.push_back(fs::path(std::string(*cuda_home)) / "bin" / "nvcc");
  }
  candidates.emplace_back("/usr/local/cuda/bin/nvcc");
  for (const auto& candidate : candidates) {
    if (auto found = runner.find_program(candidate.string())) {
      return fs::absolute(*found);
    }
  }
  return std::nullopt;
}

util::Expected<types::Version> parse_nvcc_version(std::string_view output) {
  // The pattern torch.utils.cpp_extension reads nvcc's version with.
  static const std::regex k_release(R"(release (\d+\.\d+))");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(output.begin(), output.end(), match, k_release)) {
    return util::fail("`nvcc --version` printed no \"release X.Y\"");
  }
  return types::Version::parse(match[1].str());
}

std::vector<CudaArch> parse_nvcc_arch_list(std::string_view output) {
  static const std::regex k_compute(R"(compute_(\d+)(\d))");
  std::vector<CudaArch> archs;
  std::string text(output);
  for (std::sregex_iterator it(text.begin(), text.end(), k_compute), end; it != end; ++it) {
    // The match must end the token: "compute_90a" names the arch-specific 9.0a.
    const auto after = static_cast<std::size_t>(it->position() + it->length());
    if (after < text.size() && std::isalpha(static_cast<unsigned char>(text[after])) != 0) {
      continue;
    }
    CudaArch arch;
    arch.major = static_cast<unsigned>(std::stoul((*it)[1].str()));
    arch.minor = static_cast<unsigned>(std::stoul((*it)[2].str()));
    archs.push_back(arch);
  }
  return archs;
}

util::Expected<std::optional<CudaToolkit>> detect_cuda_toolkit(
    CommandRunner& runner, std::optional<std::string_view> cuda_home) {
  const auto nvcc = find_nvcc(runner, cuda_home);
  if (!nvcc) {
    return std::optional<CudaToolkit>();
  }
  CudaToolkit toolkit;
  toolkit.nvcc = *nvcc;
  const auto version = runner.capture({{nvcc->string(), "--version"}, {}});
  if (!version) {
    return util::fail(fmt::format("\"{}\" --version failed; is the CUDA toolkit complete?",
                                  nvcc->string()));
  }
  toolkit.version = KH_TRY(parse_nvcc_version(*version).map_error([&](util::Error error) {
    return util::Error{fmt::format("{} ({})", error.message, nvcc->string())};
  }));
  if (const auto archs = runner.capture({{nvcc->string(), "--list-gpu-arch"}, {}})) {
    toolkit.supported = parse_nvcc_arch_list(*archs);
  }
  return std::optional<CudaToolkit>(std::move(toolkit));
}

}  // namespace kernelhub::builder
