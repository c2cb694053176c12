// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <kernelhub/checks/python_statements.hpp>

// Call expressions `a.b.c(args)` in Python statements, with their arguments split at the top
// level commas, and whether each call is a decorator.
namespace kernelhub::checks {

struct CallArgument {
  std::string keyword;           // "name" for `name=...`; empty for a positional argument
  bool starred = false;          // `*args` or `**kwargs`
  std::span<const Token> value;  // the argument's tokens (after `keyword=` or the stars)
};

struct Call {
  // The callee's dotted parts, e.g. {"torch", "library", "custom_op"}. The first part is ""
  // when the receiver is an expression that is not a plain name (`Library(...).define(...)`).
  std::vector<std::string> callee;
  std::vector<CallArgument> arguments;
  bool decorator = false;  // `@callee(...)` on its own line
  std::uint32_t line = 0;  // of the `@` for a decorator, else of the callee's first token
  std::uint32_t column = 0;
  const Statement* statement = nullptr;

  // The argument at `position` among the positional ones, else the one named `keyword`;
  // nullptr when neither is there.
  const CallArgument* argument(std::size_t position, std::string_view keyword) const;
};

// Every call whose callee is a (dotted) name, in source order, nested calls included.
std::vector<Call> find_calls(const std::vector<Statement>& statements);

// True when `tokens` are exactly one call whose callee's last part is `function`, such as
// `add_op_namespace_prefix("x")` or `ops.add_op_namespace_prefix(name)`.
bool is_call_to(std::span<const Token> tokens, std::string_view function);

}  // namespace kernelhub::checks
