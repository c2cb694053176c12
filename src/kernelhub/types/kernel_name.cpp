// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/kernel_name.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <kernelhub/util/ascii.hpp>

namespace kernelhub::types {

bool KernelName::is_valid(std::string_view text) {
  if (text.size() < 2 || !util::is_ascii_lower(text.front())) {
    return false;
  }
  if (!util::is_ascii_lower(text.back()) && !util::is_ascii_digit(text.back())) {
    return false;
  }
  return std::all_of(text.begin(), text.end(),
                     [](char c) {
                       return util::is_ascii_lower(c) || util::is_ascii_digit(c) || c == '-';
                     });
}

util::Expected<KernelName> KernelName::parse(std::string_view text) {
  if (!is_valid(text)) {
    return util::fail(fmt::format(
        "invalid kernel name \"{}\": a name starts with a lowercase letter, continues with "
        "lowercase letters, digits and dashes, ends with a letter or digit and has at least two "
        "characters (for example \"my-kernel\", \"relu2d\")",
        text));
  }
  return KernelName(std::string(text));
}

std::string KernelName::python_name() const {
  std::string result = m_name;
  std::replace(result.begin(), result.end(), '-', '_');
  return result;
}

}  // namespace kernelhub::types
