// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

// The modules any kernel may import besides its own package and python-depends: the standard
// library, torch and what torch requires (data/python_imports.json, generated from the venv by
// scripts/generate_python_import_data.py and compiled in).
namespace kernelhub::checks {

class ImportPolicy {
 public:
  static util::Expected<ImportPolicy> parse(std::string_view json);
  // The embedded policy (parsed once).
  static const ImportPolicy& builtin();

  bool is_stdlib(std::string_view top_level) const;
  // torch's own modules (torch, functorch, torchgen) and those of the packages it requires.
  bool comes_with_torch(std::string_view top_level) const;

 private:
  std::set<std::string, std::less<>> m_stdlib;
  std::set<std::string, std::less<>> m_torch;
};

}  // namespace kernelhub::checks
