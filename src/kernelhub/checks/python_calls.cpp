// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/python_calls.hpp>

namespace kernelhub::checks {

namespace {

bool opens(const Token& token) {
  return token.kind == TokenKind::op &&
         (token.text == "(" || token.text == "[" || token.text == "{");
}

bool closes(const Token& token) {
  return token.kind == TokenKind::op &&
         (token.text == ")" || token.text == "]" || token.text == "}");
}

// Index of the bracket closing the one at `open`, or tokens.size() when unbalanced.
std::size_t matching_close(std::span<const Token> tokens, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < tokens.size(); ++i) {
    if (opens(tokens[i])) {
      ++depth;
    } else if (closes(tokens[i]) && --depth == 0) {
      return i;
    }
  }
  return tokens.size();
}

std::vector<CallArgument> split_arguments(std::span<const Token> inside) {
  std::vector<CallArgument> arguments;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= inside.size(); ++i) {
    const bool at_end = i == inside.size();
    if (!at_end) {
      if (opens(inside[i])) {
        ++depth;
      } else if (closes(inside[i])) {
        --depth;
      }
    }
    if (!(at_end || (depth == 0 && is_op(inside[i], ",")))) {
      continue;
    }
    auto part = inside.subspan(start, i - start);
    start = i + 1;
    if (part.empty()) {
      continue;  // a trailing comma
    }
    CallArgument argument;
    if (is_op(part[0], "*") || is_op(part[0], "**")) {
      argument.starred = true;
      part = part.subspan(1);
    } else if (part.size() >= 2 && part[0].kind == TokenKind::name && is_op(part[1], "=")) {
      argument.keyword = std::string(part[0].text);
      part = part.subspan(2);
    }
    argument.value = part;
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

void add_calls(const Statement& statement, std::vector<Call>& out) {
  const auto tokens = statement.tokens;
  for (std::size_t open = 1; open < tokens.size(); ++open) {
    if (!is_op(tokens[open], "(") || tokens[open - 1].kind != TokenKind::name ||
        is_python_keyword(tokens[open - 1].text)) {
      continue;
    }
    if (open >= 2 && tokens[open - 2].kind == TokenKind::name &&
        (tokens[open - 2].text == "def" || tokens[open - 2].text == "class")) {
      continue;  // a definition, not a call
    }
    Call call;
    std::size_t first = open - 1;
    call.callee.insert(call.callee.begin(), std::string(tokens[first].text));
    while (first >= 2 && is_op(tokens[first - 1], ".")) {
      if (tokens[first - 2].kind == TokenKind::name) {
        first -= 2;
        call.callee.insert(call.callee.begin(), std::string(tokens[first].text));
      } else {
        call.callee.insert(call.callee.begin(), std::string());  // receiver is an expression
        break;
      }
    }
    call.statement = &statement;
    call.decorator = first == 1 && is_op(tokens[0], "@");
    const auto& anchor = call.decorator ? tokens[0] : tokens[first];
    call.line = anchor.line;
    call.column = anchor.column;
    const auto close = matching_close(tokens, open);
    call.arguments = split_arguments(tokens.subspan(open + 1, close - open - 1));
    out.push_back(std::move(call));
  }
}

}  // namespace

const CallArgument* Call::argument(std::size_t position, std::string_view keyword) const {
  std::size_t seen = 0;
  for (const auto& argument : arguments) {
    if (argument.keyword.empty() && !argument.starred) {
      if (seen++ == position) {
        return &argument;
      }
    }
  }
  for (const auto& argument : arguments) {
    if (!keyword.empty() && argument.keyword == keyword) {
      return &argument;
    }
  }
  return nullptr;
}

std::vector<Call> find_calls(const std::vector<Statement>& statements) {
  std::vector<Call> out;
  for (const auto& statement : statements) {
    add_calls(statement, out);
  }
  return out;
}

bool is_call_to(std::span<const Token> tokens, std::string_view function) {
  std::size_t i = 0;
  while (i + 1 < tokens.size() && tokens[i].kind == TokenKind::name && is_op(tokens[i + 1], ".")) {
    i += 2;
  }
  if (i + 1 >= tokens.size() || tokens[i].kind != TokenKind::name || tokens[i].text != function ||
      !is_op(tokens[i + 1], "(")) {
    return false;
  }
  return matching_close(tokens, i + 1) == tokens.size() - 1;
}

}  // namespace kernelhub::checks
