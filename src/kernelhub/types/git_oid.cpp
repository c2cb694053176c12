// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/git_oid.hpp>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kernelhub::types {

util::Expected<GitOid> GitOid::parse(std::string_view text) {
  const bool hex = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
  if ((text.size() != 40 && text.size() != 64) || !hex) {
    return util::fail(fmt::format(
        "invalid git object id \"{}\": expected 40 or 64 hexadecimal digits", text));
  }
  std::string lowered(text);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return GitOid(std::move(lowered));
}

}  // namespace kernelhub::types
