// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/retry_policy.hpp>

#include <algorithm>

namespace kernelhub::hub {

namespace {

// A server's Retry-After is honoured up to this, so one header cannot stall a run.
constexpr std::chrono::milliseconds k_max_retry_after{60'000};

}  // namespace

bool RetryPolicy::retryable_status(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

std::chrono::milliseconds RetryPolicy::delay_after(int attempt,
                                                   std::chrono::milliseconds retry_after) const {
  std::chrono::milliseconds delay = base_delay;
  for (int i = 1; i < attempt && delay < max_delay; ++i) {
    delay *= 2;
  }
  delay = std::min(delay, max_delay);
  return std::max(delay, std::min(retry_after, k_max_retry_after));
}

}  // namespace kernelhub::hub
