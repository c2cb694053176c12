// SPDX-License-Identifier: Apache-2.0
// Three kinds of global state that the other kernel of the pair defines under the same names.
// With default visibility or STB_GNU_UNIQUE symbols, the dynamic linker would bind both
// kernels to one copy of each.
#pragma once

#include <cstdint>
#include <vector>

namespace same_globals {

// A namespace-scope variable with external linkage.
extern std::int64_t g_value;

// A function-local static in an inline function template: GCC makes it STB_GNU_UNIQUE,
// process-wide, unless the kernel is compiled with -fno-gnu-unique.
template <typename T>
T& local_static() {
  static T value{};
  return value;
}

// A class static member, inline so every user shares one definition (COMDAT).
struct Registry {
  static inline std::int64_t value = 0;
};

void set_values(std::int64_t global_value, std::int64_t local_value, std::int64_t member_value);
std::vector<std::int64_t> get_values();

}  // namespace same_globals
