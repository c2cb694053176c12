// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace kernelhub::util {

// An expected failure: a message meant for the user (lowercase, no trailing period).
struct Error {
  std::string message;
};

template <typename T>
using Expected = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(std::string message) {
  return tl::unexpected<Error>(Error{std::move(message)});
}

}  // namespace kernelhub::util

// KH_TRY(expr): evaluates an Expected; on failure returns its error from the enclosing
// function, otherwise yields the value (GNU statement expression, as ccache's TRY).
#define KH_TRY(expr)                                              \
  __extension__({                                                 \
    auto kh_try_result_ = (expr);                                 \
    if (!kh_try_result_) {                                        \
      return tl::unexpected<::kernelhub::util::Error>(            \
          std::move(kh_try_result_).error());                     \
    }                                                             \
    std::move(kh_try_result_).value();                            \
  })
