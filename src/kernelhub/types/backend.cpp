// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/backend.hpp>

#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::types {

std::string_view to_string(Backend backend) {
  return k_backend_names[static_cast<std::size_t>(backend)];
}

util::Expected<Backend> parse_backend(std::string_view text) {
  std::string lowered(text);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::size_t i = 0; i < k_backend_names.size(); ++i) {
    if (k_backend_names[i] == lowered) {
      return k_all_backends[i];
    }
  }
  auto hint = util::did_you_mean(text, k_backend_names);
  return util::fail(fmt::format("unknown backend \"{}\"{}{}", text, hint.empty() ? "" : "; ", hint));
}

std::optional<Backend> backend_from_name(std::string_view name) {
  for (std::size_t i = 0; i < k_backend_names.size(); ++i) {
    if (k_backend_names[i] == name) {
      return k_all_backends[i];
    }
  }
  return std::nullopt;
}

bool has_native_kernels(Backend backend) {
  switch (backend) {
    case Backend::cpu:
    case Backend::cuda:
    case Backend::metal:
    case Backend::rocm:
    case Backend::xpu:
      return true;
    default:
      return false;
  }
}

}  // namespace kernelhub::types
