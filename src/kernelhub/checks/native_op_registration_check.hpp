// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include <kernelhub/util/diagnostic.hpp>

// The op-registration check for a kernel's C++, CUDA, HIP, SYCL and Objective-C++ sources
// (issue 13 item 3), the native side of check-ops. Each build of a kernel registers its ops
// under its own namespace, TORCH_EXTENSION_NAME, so two builds can live in one process. A
// fixed namespace builds fine and then fails where it is used: a schema naming a namespace
// aborts the process that loads the kernel (c10::Error "Explicitly provided namespace ... does
// not match ..."), and a block with a fixed namespace puts the ops where the package's `ops`
// does not look (every call raises AttributeError), so it is caught before compiling:
// - `TORCH_LIBRARY(ns, m)`, `TORCH_LIBRARY_FRAGMENT(ns, m)` and their STABLE_ forms take `ns`
//   literally (even TORCH_EXTENSION_NAME is not expanded): use TORCH_LIBRARY_EXPAND from
//   registration.h;
// - `TORCH_LIBRARY_IMPL(ns, Device, m)` (and STABLE_): the same, except for `aten`, whose ops
//   a kernel may implement;
// - the _EXPAND forms with a first argument other than TORCH_EXTENSION_NAME;
// - `x.def("ns::op(...)")`, `x.impl("ns::op", ...)` (also `->`): a schema or name that spells
//   a namespace (other than `aten` in impl) does not match the block's.
// Comments, string contents and `#define` lines are not scanned (registration.h defines the
// _EXPAND macros with TORCH_LIBRARY). Reported at the macro or the string, `file:line:col`.
namespace kernelhub::checks {

// Whether `path` names a source the builder compiles with a C-family compiler (by extension).
bool is_native_source(std::string_view path);

void check_native_op_registrations(std::string_view file, std::string_view source,
                                   util::DiagnosticSink& sink);

}  // namespace kernelhub::checks
