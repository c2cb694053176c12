// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/op_registration_check.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include <fmt/format.h>

#include <kernelhub/checks/python_calls.hpp>
#include <kernelhub/checks/python_statements.hpp>
#include <kernelhub/checks/python_tokenizer.hpp>

namespace kernelhub::checks {

namespace {

constexpr std::string_view k_prefix_function = "add_op_namespace_prefix";
constexpr std::array<std::string_view, 6> k_register_functions = {
    "register_fake",  "register_kernel",         "register_autograd",
    "register_vmap",  "register_torch_dispatch", "register_autocast"};

// What an op-name argument is, as far as one file tells.
struct NameValue {
  enum class Kind { prefixed, literal, formatted, other } kind = Kind::other;
  std::string text;  // literal: the string; other: the expression's source text
};

std::string source_text(std::span<const Token> tokens) {
  if (tokens.empty()) {
    return {};
  }
  const char* begin = tokens.front().text.data();
  const char* end = tokens.back().text.data() + tokens.back().text.size();
  return std::string(begin, static_cast<std::size_t>(end - begin));
}

// Classifies an expression without following variables.
NameValue classify_expression(std::span<const Token> tokens) {
  if (is_call_to(tokens, k_prefix_function)) {
    return {NameValue::Kind::prefixed, {}};
  }
  if (!tokens.empty() && std::all_of(tokens.begin(), tokens.end(), [](const Token& t) {
        return t.kind == TokenKind::string;
      })) {
    const bool formatted = std::any_of(tokens.begin(), tokens.end(),
                                       [](const Token& t) { return t.formatted; });
    std::string text;
    for (const auto& token : tokens) {
      text += token.value;  // implicit concatenation
    }
    return {formatted ? NameValue::Kind::formatted : NameValue::Kind::literal, text};
  }
  return {NameValue::Kind::other, source_text(tokens)};
}

// The file's view of names: import aliases and module-level constants.
class FileScope {
 public:
  FileScope(const std::vector<Statement>& statements, const std::vector<Import>& imports) {
    for (const auto& import : imports) {
      if (!import.from_form && !import.alias.empty()) {
        m_aliases[import.alias] = import.module;
      } else if (import.from_form && import.level == 0) {
        for (const auto& [name, alias] : import.names) {
          m_aliases[alias.empty() ? name : alias] = import.module + "." + name;
        }
      }
    }
    for (const auto& statement : statements) {
      const auto tokens = statement.tokens;
      if (statement.module_level() && tokens.size() > 2 && tokens[0].kind == TokenKind::name &&
          tokens[1].kind == TokenKind::op && tokens[1].text == "=") {
        m_constants[std::string(tokens[0].text)] = classify_expression(tokens.subspan(2));
      }
    }
  }

  // The callee's dotted path with its first part resolved through the imports.
  std::string resolve(const std::vector<std::string>& callee) const {
    std::string path;
    for (std::size_t i = 0; i < callee.size(); ++i) {
      if (i == 0) {
        auto alias = m_aliases.find(callee[0]);
        path = alias != m_aliases.end() ? alias->second : callee[0];
      } else {
        path += "." + callee[i];
      }
    }
    return path;
  }

  // Like classify_expression, following a plain name to its module-level assignment.
  NameValue classify(std::span<const Token> tokens) const {
    auto value = classify_expression(tokens);
    if (value.kind == NameValue::Kind::other && tokens.size() == 1 &&
        tokens[0].kind == TokenKind::name) {
      auto constant = m_constants.find(std::string(tokens[0].text));
      if (constant != m_constants.end() && constant->second.kind != NameValue::Kind::other) {
        return constant->second;
      }
    }
    return value;
  }

 private:
  std::map<std::string, std::string> m_aliases;
  std::map<std::string, NameValue> m_constants;
};

// "relu" from "mylib::relu(Tensor x) -> Tensor", for the hint.
std::string short_op_name(std::string name) {
  if (auto colons = name.rfind("::"); colons != std::string::npos) {
    name = name.substr(colons + 2);
  }
  if (auto paren = name.find('('); paren != std::string::npos) {
    name = name.substr(0, paren);
  }
  return name.empty() ? "my_op" : name;
}

std::string describe(const NameValue& value) {
  switch (value.kind) {
    case NameValue::Kind::literal:
      return fmt::format("op \"{}\"", value.text);
    case NameValue::Kind::formatted:
      return "an op named by an f-string";
    default:
      return fmt::format("an op named by `{}`", value.text);
  }
}

class Checker {
 public:
  Checker(std::string_view file, std::string_view source, util::DiagnosticSink& sink)
      : m_file(file), m_source(source), m_sink(sink) {}

  void check(const Call& call, const FileScope& scope) {
    // Resolved through the imports, so `co` of `import custom_op as co` is custom_op.
    const auto path = scope.resolve(call.callee);
    const auto function = path.substr(path.rfind('.') + 1);
    const auto receiver = path.size() > function.size()
                              ? path.substr(0, path.size() - function.size() - 1)
                              : std::string();
    const bool torch_library = receiver == "torch.library" || call.callee.size() == 1;
    if (function == "custom_op" || function == "triton_op") {
      require_prefixed(call, scope, function, call.argument(0, "name"));
    } else if (function == "define" && receiver == "torch.library") {
      require_prefixed(call, scope, "torch.library.define", call.argument(0, "qualname"));
    } else if (function == "impl" && receiver == "torch.library") {
      refuse_string(call, scope, "torch.library.impl", call.argument(0, "qualname"));
    } else if (torch_library && std::find(k_register_functions.begin(),
                                          k_register_functions.end(),
                                          function) != k_register_functions.end()) {
      refuse_string(call, scope, function, call.argument(0, "op"));
    } else if (function == "Library" && (torch_library || receiver.ends_with("library"))) {
      check_library(call, scope);
    } else if ((function == "define" || function == "impl") && call.callee.size() > 1 &&
               receiver != "torch.library") {
      check_library_method(call, scope, function);
    }
  }

 private:
  void require_prefixed(const Call& call, const FileScope& scope, std::string_view function,
                        const CallArgument* argument) {
    if (argument == nullptr) {
      return;  // no name at all: torch itself refuses that
    }
    auto value = scope.classify(argument->value);
    if (value.kind != NameValue::Kind::prefixed) {
      report(call, function, value);
    }
  }

  void refuse_string(const Call& call, const FileScope& scope, std::string_view function,
                     const CallArgument* argument) {
    if (argument == nullptr) {
      return;
    }
    auto value = scope.classify(argument->value);
    if (value.kind == NameValue::Kind::literal || value.kind == NameValue::Kind::formatted) {
      report(call, function, value);
    }
  }

  void check_library(const Call& call, const FileScope& scope) {
    const auto* ns = call.argument(0, "ns");
    const auto* kind = call.argument(1, "kind");
    if (ns == nullptr) {
      return;
    }
    if (kind != nullptr) {
      auto kind_value = scope.classify(kind->value);
      if (kind_value.kind == NameValue::Kind::literal && kind_value.text == "IMPL") {
        return;  // implementations for an existing namespace (aten, another library)
      }
    }
    auto value = scope.classify(ns->value);
    if (value.kind != NameValue::Kind::literal && value.kind != NameValue::Kind::formatted) {
      return;
    }
    const auto what = value.kind == NameValue::Kind::literal
                          ? fmt::format("namespace \"{}\"", value.text)
                          : std::string("a namespace from an f-string");
    emit(call, fmt::format("torch.library.Library defines ops in the fixed {}", what),
         "derive the namespace from add_op_namespace_prefix (e.g. "
         "add_op_namespace_prefix(\"\").split(\"::\")[0]) so each build has its own");
  }

  void check_library_method(const Call& call, const FileScope& scope, std::string_view method) {
    const auto* argument = call.argument(0, method == "define" ? "schema" : "op_name");
    if (argument == nullptr) {
      return;
    }
    auto value = scope.classify(argument->value);
    if (value.kind == NameValue::Kind::literal && value.text.find("::") != std::string::npos) {
      report(call, method, value);
    }
  }

  void report(const Call& call, std::string_view function, const NameValue& value) {
    const auto op = value.kind == NameValue::Kind::literal ? short_op_name(value.text)
                                                           : std::string("my_op");
    emit(call,
         fmt::format("{} registers {} without add_op_namespace_prefix", function, describe(value)),
         fmt::format("name it add_op_namespace_prefix(\"{}\") (from ._ops) so each build "
                     "registers in its own namespace",
                     op));
  }

  void emit(const Call& call, std::string message, std::string hint) {
    util::Diagnostic diagnostic;
    diagnostic.location = {std::string(m_file), call.line, call.column};
    diagnostic.message = std::move(message);
    diagnostic.hint = std::move(hint);
    diagnostic.source_line = std::string(util::line_of(m_source, call.line));
    m_sink.report(std::move(diagnostic));
  }

  std::string_view m_file;
  std::string_view m_source;
  util::DiagnosticSink& m_sink;
};

}  // namespace

void check_op_registrations(std::string_view file, std::string_view source,
                            util::DiagnosticSink& sink) {
  const auto tokenized = tokenize_python(source);
  if (tokenized.error) {
    util::Diagnostic diagnostic;
    diagnostic.location = {std::string(file), tokenized.error->line, tokenized.error->column};
    diagnostic.message = fmt::format("cannot read this Python file: {}", tokenized.error->message);
    diagnostic.source_line = std::string(util::line_of(source, tokenized.error->line));
    sink.report(std::move(diagnostic));
  }
  const auto statements = split_statements(tokenized.tokens);
  const FileScope scope(statements, find_imports(statements));
  Checker checker(file, source, sink);
  for (const auto& call : find_calls(statements)) {
    checker.check(call, scope);
  }
}

}  // namespace kernelhub::checks
