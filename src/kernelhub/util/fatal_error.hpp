// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>

namespace kernelhub::util {

// The one exception type: thrown where a command cannot continue, caught once in the CLI's
// main, which prints "<program>: error: <message>" and exits non-zero.
class FatalError : public std::runtime_error {
 public:
  explicit FatalError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace kernelhub::util
