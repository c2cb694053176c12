// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kernelhub/checks/python_tokenizer.hpp>

// Simple statements of a tokenized Python file with the compound statements around them, and
// the imports among them. Blocks are found from indentation and `keyword ...:` headers, which
// is all the checks need to tell module-level code, `try:` bodies and `if TYPE_CHECKING:`.
namespace kernelhub::checks {

// A compound statement enclosing a simple one: its keyword ("if", "try", "def", "except", ...).
struct Block {
  std::string keyword;
  bool type_checking = false;  // an `if` whose condition names TYPE_CHECKING
  std::uint32_t indent = 0;
  // `if`/`elif`: the names in its condition; `elif`/`else`: also those of the `if` and
  // `elif`s before it, whose outcome decides whether this branch runs.
  std::vector<std::string> condition_names;
};

struct Statement {
  std::span<const Token> tokens;  // never empty; no newline or ';' tokens
  std::vector<Block> blocks;      // outermost first; empty at module level

  bool module_level() const { return blocks.empty(); }
  // Inside the body of a `try:` (not its handlers): a failing import there is expected.
  bool in_try_body() const;
  // Inside `if TYPE_CHECKING:`: never runs.
  bool type_checking_only() const;
  // Inside an `except` handler.
  bool in_except_handler() const;
  // Inside an `if`/`elif`/`else` branch whose condition names one of `names`.
  template <typename Names>
  bool under_condition_on(const Names& names) const {
    for (const auto& block : blocks) {
      for (const auto& name : block.condition_names) {
        if (names.contains(name)) {
          return true;
        }
      }
    }
    return false;
  }
};

// Splits `tokens` (from tokenize_python) into simple statements in source order. A header's
// inline body (`if x: import y`) is a statement inside that block; the header itself, up to
// its colon, is a statement at the enclosing level (so calls in conditions are seen).
std::vector<Statement> split_statements(const std::vector<Token>& tokens);

struct Import {
  std::uint32_t line = 0;  // of the `import` / `from` keyword
  std::uint32_t column = 0;
  bool from_form = false;  // `from M import ...`
  int level = 0;           // the leading dots of a relative `from`
  std::string module;      // dotted; empty for `from . import x`
  std::string alias;       // `import a.b as c`: "c"
  // `from M import a as b, c`: {"a", "b"}, {"c", ""}; {"*", ""} for a star import.
  std::vector<std::pair<std::string, std::string>> names;
  const Statement* statement = nullptr;
};

// Every import statement; `import a, b` yields one Import per module.
std::vector<Import> find_imports(const std::vector<Statement>& statements);

// `a.b.c` when `tokens` are exactly a dotted name, else "".
std::string dotted_name(std::span<const Token> tokens);

}  // namespace kernelhub::checks
