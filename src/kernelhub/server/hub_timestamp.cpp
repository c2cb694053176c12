// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/hub_timestamp.hpp>

#include <ctime>

namespace kernelhub::server {

std::string hub_timestamp(std::int64_t seconds_since_epoch) {
  const auto time = static_cast<std::time_t>(seconds_since_epoch);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32] = {};
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S.000Z", &utc);
  return text;
}

}  // namespace kernelhub::server
