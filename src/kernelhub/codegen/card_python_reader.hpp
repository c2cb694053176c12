// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Just enough of a Python reader for the kernel card: the names a module exports in
// `__all__` and the classes it defines, read from module-level statements only, as the
// reference reads them from a full Python AST (builder.md §8). There is no Python parser
// packaged for C++, and a tokenizer that knows strings, comments, brackets and line
// continuations is all these two questions need.
namespace kernelhub::codegen {

// The string literals of the first module-level `__all__ = [...]` that holds any, in order.
// Like the reference: any target of a chained assignment may be `__all__`, elements that are
// not plain string literals (names, f-strings, bytes, `*rest`) are skipped, adjacent literals
// concatenate, and an assignment inside `if`/`def`/`class` is not module level. Unlike the
// reference (which accepts only a list), a tuple and an annotated `__all__: list[str] = [...]`
// count too. nullopt when there is no such assignment (or the source cannot be tokenized).
std::optional<std::vector<std::string>> read_dunder_all(std::string_view source);

// The names of the module-level `class` statements, in order (decorated ones included).
std::vector<std::string> read_class_names(std::string_view source);

// For each module-level class, the parameters of the first `def forward(...)` in its body,
// written back as a parameter list without annotations and defaults: "self, input",
// "self, x, *args, scale, **kwargs" (markers `*` and `/` kept). Kernelize compares only the
// number and kind of a layer's forward parameters, which this keeps; the card writes them into
// its example layer. A class with no forward is absent.
std::map<std::string, std::string> read_forward_parameters(std::string_view source);

}  // namespace kernelhub::codegen
