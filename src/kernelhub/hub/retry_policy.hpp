// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>

// When and how long to wait before retrying a Hub request: 408, 429 and 5xx answers and
// transient transport failures, with exponential backoff (1, 2, 4, 8, 8 s as huggingface_hub).
namespace kernelhub::hub {

struct RetryPolicy {
  int max_attempts = 5;  // the first try included
  std::chrono::milliseconds base_delay{1000};
  std::chrono::milliseconds max_delay{8000};

  // Whether a response with this status is worth another try.
  static bool retryable_status(long status);
  // The wait before attempt number `attempt` + 1 (attempt counts from 1): base * 2^(attempt-1),
  // capped at max_delay. A Retry-After header in seconds, when given, wins if it is longer
  // (still capped at 60 s so a server cannot stall us for ever).
  std::chrono::milliseconds delay_after(int attempt,
                                        std::chrono::milliseconds retry_after = {}) const;
};

}  // namespace kernelhub::hub
