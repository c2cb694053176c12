// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <kernelhub/config/python_dependencies.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>

// python-depends validation (loader.md §3.4): every name a kernel declares must be in the
// curated table, general or for the detected backend (not the `backend=` argument).
namespace kernelhub::loader {

struct RequiredImport {
  std::string package;      // pip name, for the install hint
  std::string import_name;  // the module that must be importable
  friend bool operator==(const RequiredImport&, const RequiredImport&) = default;
};

// The modules the kernel needs importable, in declaration order (packages without an import
// name are never checked). Error, the reference's text (a ValueError in Python):
// "Kernel module `<python_name>` uses unsupported kernel dependency: <name>".
util::Expected<std::vector<RequiredImport>> required_imports(
    const std::string& python_name, const std::vector<std::string>& python_depends,
    types::Backend detected, const config::PythonDependencies& table);

// The reference's ImportError text for a module that is not importable.
std::string missing_import_message(const std::string& python_name, const RequiredImport& import);

}  // namespace kernelhub::loader
