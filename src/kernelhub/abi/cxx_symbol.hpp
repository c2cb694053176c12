// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::abi {

// The C++ name of an Itanium-mangled symbol ("_ZN3c105ErrorC1E..." -> "c10::Error::Error(...)"),
// or "" when `symbol` is not a mangled name or does not demangle.
std::string demangle(std::string_view symbol);

// The namespaces the mangled entity lives in, outermost first, read from the mangled name
// itself: "_ZN5torch6stable3fooEv" -> {"torch", "stable"}; "_ZTIN3c105ErrorE" (typeinfo) ->
// {"c10"}; "_ZZN2at3fooEvE1x" (a local static) -> {"at"}; "_Z3barv" -> {}. Reading the
// mangling rather than the demangled text is what sees through return types of templates
// ("at::Tensor c10::Dispatcher::call<...>") and special names ("typeinfo for c10::Error").
// Stops at the first component it does not parse; never reads past `symbol`.
std::vector<std::string> mangled_scope(std::string_view symbol);

}  // namespace kernelhub::abi
