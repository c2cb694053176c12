// SPDX-License-Identifier: Apache-2.0
#include "state.h"

namespace same_globals {

std::int64_t g_value = 0;

void set_values(std::int64_t global_value, std::int64_t local_value, std::int64_t member_value) {
  g_value = global_value;
  local_static<std::int64_t>() = local_value;
  Registry::value = member_value;
}

std::vector<std::int64_t> get_values() {
  return {g_value, local_static<std::int64_t>(), Registry::value};
}

}  // namespace same_globals
