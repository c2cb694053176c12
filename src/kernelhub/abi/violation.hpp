// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/diagnostic.hpp>

namespace kernelhub::abi {

enum class Rule { object_file, manylinux, dependency, python_abi, torch_stable_abi, macos };

// "manylinux", "python-abi", ...: the name the output and --json use.
std::string_view rule_name(Rule rule);

// One broken rule in one library, with what the user needs to find it: the exact symbol (or
// library, for dependencies) and the version that breaks the rule.
struct Violation {
  std::string library;  // the path as found or given
  Rule rule = Rule::object_file;
  std::string symbol;     // the undefined symbol, or the DT_NEEDED name; "" for the file
  std::string demangled;  // the C++ name of `symbol`, when it is a mangled one
  std::string version;    // "GLIBC_2.34", "3.11" (Python), "2.12" (torch), "26.0" (macOS)
  std::string message;    // lowercase, no trailing period, offending values quoted
  std::string hint;

  friend bool operator==(const Violation&, const Violation&) = default;
};

// Where the rules report, so one run reports every violation in every library.
class ViolationSink {
 public:
  virtual ~ViolationSink() = default;
  virtual void report(Violation violation) = 0;
};

class ViolationCollector : public ViolationSink {
 public:
  void report(Violation violation) override { m_violations.push_back(std::move(violation)); }
  const std::vector<Violation>& all() const { return m_violations; }
  // Ordered by library, rule, symbol, version, then message; duplicates dropped.
  std::vector<Violation> sorted() const;

 private:
  std::vector<Violation> m_violations;
};

// The violation as a diagnostic located at its library:
//   lib.so: error: [manylinux] symbol "pthread_create" needs "GLIBC_2.34", ...
util::Diagnostic to_diagnostic(const Violation& violation);

// {"libraries": [...], "violations": [{"library", "rule", "symbol", "demangled", "version",
// "message", "hint"}], "ok": bool} as pretty JSON.
std::string violations_to_json(const std::vector<std::string>& libraries,
                               const std::vector<Violation>& violations);

}  // namespace kernelhub::abi
