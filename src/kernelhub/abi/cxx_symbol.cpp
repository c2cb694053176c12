// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/cxx_symbol.hpp>

#include <cctype>
#include <cstdlib>
#include <memory>

#include <cxxabi.h>

namespace kernelhub::abi {

std::string demangle(std::string_view symbol) {
  if (!symbol.starts_with("_Z")) {
    return {};
  }
  std::string name(symbol);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(
      ::abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) {
    return {};
  }
  return text.get();
}

namespace {

// A cursor over the mangled name; every read is bounds-checked.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : m_text(text) {}

  bool consume(std::string_view prefix) {
    if (!m_text.starts_with(prefix)) {
      return false;
    }
    m_text.remove_prefix(prefix.size());
    return true;
  }
  char peek() const { return m_text.empty() ? '\0' : m_text.front(); }

  // <source-name> ::= <positive length number> <identifier>
  bool source_name(std::string& out) {
    std::size_t digits = 0;
    std::size_t length = 0;
    while (digits < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[digits]))) {
      if (length > m_text.size()) {
        return false;
      }
      length = length * 10 + static_cast<std::size_t>(m_text[digits] - '0');
      ++digits;
    }
    if (digits == 0 || length == 0 || length > m_text.size() - digits) {
      return false;
    }
    out = std::string(m_text.substr(digits, length));
    m_text.remove_prefix(digits + length);
    // ABI tags ("B5cxx11") decorate the name but are not scopes.
    std::string ignored;
    while (consume("B")) {
      if (!source_name(ignored)) {
        return false;
      }
    }
    return true;
  }

  // Skips a <number> or <offset> of a thunk ("n16_" / "16_").
  bool call_offset() {
    consume("n");
    bool any = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      m_text.remove_prefix(1);
      any = true;
    }
    return any && consume("_");
  }

 private:
  std::string_view m_text;
};

std::vector<std::string> scope_of_name(Cursor& cursor) {
  std::vector<std::string> components;
  cursor.consume("L");  // internal linkage
  if (cursor.consume("N")) {
    while (cursor.consume("r") || cursor.consume("V") || cursor.consume("K")) {
    }
    if (cursor.consume("R") || cursor.consume("O")) {
    }
    if (cursor.consume("St")) {
      components.emplace_back("std");
    } else if (cursor.consume("Sa") || cursor.consume("Sb") || cursor.consume("Ss") ||
               cursor.consume("Si") || cursor.consume("So") || cursor.consume("Sd")) {
      return {"std"};
    }
    std::string component;
    while (cursor.source_name(component)) {
      components.push_back(component);
    }
    // The last component is the entity itself, not a scope (unless the parse stopped at a
    // template argument list or a constructor, where it still names a class).
    if (!components.empty() && cursor.peek() == 'E') {
      components.pop_back();
    }
    return components;
  }
  if (cursor.consume("St")) {
    return {"std"};
  }
  return {};  // an unscoped name lives in the global namespace
}

}  // namespace

std::vector<std::string> mangled_scope(std::string_view symbol) {
  Cursor cursor(symbol);
  if (!cursor.consume("_Z")) {
    return {};
  }
  // Special names whose subject is a type or another entity: vtable, VTT, typeinfo,
  // typeinfo name, thunks, guard variables, TLS wrappers.
  if (cursor.consume("TV") || cursor.consume("TT") || cursor.consume("TI") ||
      cursor.consume("TS")) {
    return scope_of_name(cursor);  // a global type's source name gives no scope
  }
  if (cursor.consume("Th")) {
    if (!cursor.call_offset()) {
      return {};
    }
  } else if (cursor.consume("Tv")) {
    if (!cursor.call_offset() || !cursor.call_offset()) {
      return {};
    }
  } else if (cursor.consume("GV") || cursor.consume("GR") || cursor.consume("TH") ||
             cursor.consume("TW")) {
  }
  // A local entity (Z <function encoding> E <entity>) lives in its function's scope.
  cursor.consume("Z");
  return scope_of_name(cursor);
}

}  // namespace kernelhub::abi
