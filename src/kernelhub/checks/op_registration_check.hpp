// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include <kernelhub/util/diagnostic.hpp>

// The op-registration check (builder.md §6.1, done better): every torch.library registration
// in a kernel's Python must name its op through `add_op_namespace_prefix`, because each build
// of a kernel gets its own op namespace and a fixed name makes two builds (or two kernels)
// clash in one process. Reported at the decorator's `@` or the call, `file:line:col`.
//
// What is checked, wherever it appears (module level, nested, in conditions):
// - `custom_op` / `triton_op` (any receiver, aliases, keyword `name=`), `torch.library.define`
//   (`qualname=`): the name must be a call to add_op_namespace_prefix, directly or through a
//   module-level variable assigned one. Anything else is reported.
// - `torch.library.register_fake` / `register_kernel` / `register_autograd` / `register_vmap` /
//   `register_torch_dispatch` / `register_autocast` / `impl` (keyword `op=` / `qualname=`):
//   a string (literal, f-string, or a module-level variable holding one) is reported; an op
//   object (`my_op`, `ops.my_op`) is fine. The method forms on an op object
//   (`@my_op.register_fake`) take no name and are fine.
// - `torch.library.Library(ns, kind)` (`ns=`): a fixed string namespace is reported unless
//   the kind is "IMPL" (implementations for another library's ops, e.g. aten).
// - `lib.define("ns::op(...)")` / `lib.impl("ns::op", ...)` on a library object: a name that
//   spells a namespace is reported.
// Aliases are followed: `from torch.library import custom_op as co`, `import torch.library as
// tl`, `from torch import library`.
namespace kernelhub::checks {

// Checks one file's `source`; `file` is the name diagnostics use. A file that cannot be
// tokenized (an unterminated string) is reported too.
void check_op_registrations(std::string_view file, std::string_view source,
                            util::DiagnosticSink& sink);

}  // namespace kernelhub::checks
