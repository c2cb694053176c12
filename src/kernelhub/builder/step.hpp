// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>

#include <kernelhub/util/expected.hpp>

// KH_STEP(expr): runs a step that yields util::Expected<void> and returns its error from the
// enclosing function (KH_TRY needs a value to yield). Private to the builder's sources.
#define KH_STEP(expr)                                                  \
  do {                                                                 \
    if (auto kh_step_result_ = (expr); !kh_step_result_) {             \
      return tl::unexpected(std::move(kh_step_result_).error());       \
    }                                                                  \
  } while (false)
