// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/util/expected.hpp>

// KH_TRY for an Expected<void> step (KH_TRY needs a value to yield): returns its error from
// the enclosing function.
#define KH_ABI_CHECK(expr)                                                  \
  do {                                                                      \
    if (auto kh_check_result_ = (expr); !kh_check_result_) {                \
      return tl::unexpected<::kernelhub::util::Error>(                      \
          std::move(kh_check_result_).error());                             \
    }                                                                       \
  } while (false)
