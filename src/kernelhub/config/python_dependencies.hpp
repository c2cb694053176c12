// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>

// The curated allow-list of `python-depends` names (data/python_dependencies.json, compiled in).
// A kernel may only name packages listed here: the builder and the loader install them, and a
// free-form list would let a kernel pull arbitrary code into the user's environment.
namespace kernelhub::config {

// One pip package a python-depends name installs.
struct PythonPackage {
  std::string package;                    // the pip distribution name
  std::optional<std::string> import_name; // the module it provides, if any

  friend bool operator==(const PythonPackage&, const PythonPackage&) = default;
};

// Where a python-depends list lives: [general] (no backend) or [general.<backend>].
using PythonDependencyScope = std::optional<types::Backend>;

class PythonDependencies {
 public:
  // Parses the JSON allow-list; the error names what is malformed.
  static util::Expected<PythonDependencies> parse(std::string_view json);
  // The embedded allow-list (parsed once).
  static const PythonDependencies& builtin();

  // The packages `name` installs in `scope`, or nullptr when it is not allowed there.
  const std::vector<PythonPackage>* find(PythonDependencyScope scope, std::string_view name) const;
  // Every allowed name in `scope`, sorted.
  std::vector<std::string> names(PythonDependencyScope scope) const;
  // False for backends with no allow-list at all (the reference's "no dependencies are defined
  // for backend"), as opposed to an empty one.
  bool has_scope(PythonDependencyScope scope) const;

 private:
  using Table = std::map<std::string, std::vector<PythonPackage>, std::less<>>;
  const Table* table(PythonDependencyScope scope) const;

  Table m_general;
  std::map<types::Backend, Table> m_backends;
};

}  // namespace kernelhub::config
