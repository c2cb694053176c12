// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/util/expected.hpp>

// KH_CHECK(expr): KH_TRY for an Expected<void>, which has no value to yield: on failure returns
// its error from the enclosing function. The verifier is mostly a sequence of such checks.
#define KH_CHECK(expr)                                                               \
  do {                                                                               \
    auto kh_check_result_ = (expr);                                                  \
    if (!kh_check_result_) {                                                         \
      return tl::unexpected<::kernelhub::util::Error>(                               \
          std::move(kh_check_result_).error());                                      \
    }                                                                                \
  } while (false)
