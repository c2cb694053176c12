// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// A kernel's name: `^[a-z][-a-z0-9]*[a-z0-9]$`, so it is also a valid Python identifier once
// dashes become underscores.
class KernelName {
 public:
  // An empty placeholder, so that aggregates holding a name (BuildConfig, Metadata) can be
  // default-constructed; it is not a valid name, and only parse() makes valid ones.
  KernelName() = default;
  static util::Expected<KernelName> parse(std::string_view text);
  static bool is_valid(std::string_view text);

  const std::string& str() const { return m_name; }
  // The name of the Python package: dashes replaced by underscores.
  std::string python_name() const;

  friend bool operator==(const KernelName&, const KernelName&) = default;

 private:
  explicit KernelName(std::string name) : m_name(std::move(name)) {}
  std::string m_name;
};

}  // namespace kernelhub::types
