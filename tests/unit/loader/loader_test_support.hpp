// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "../test_support.hpp"

// Builds kernel folders for the loader tests in the test's temporary cwd.
namespace kernelhub::loader::testing {

using kernelhub::testing::write;

inline std::string metadata_json(const std::string& name, const std::string& id,
                                 const std::string& backend = "cpu",
                                 const std::string& archs = "") {
  std::string backend_json = "{\"type\": \"" + backend + "\"";
  if (!archs.empty()) {
    backend_json += ", \"archs\": [" + archs + "]";
  }
  backend_json += "}";
  return "{\"name\": \"" + name + "\", \"id\": \"" + id +
         "\", \"version\": 1, \"license\": \"Apache-2.0\", \"python-depends\": [], "
         "\"backend\": " + backend_json + "}";
}

// A variant folder with metadata.json and __init__.py.
inline void make_variant(const std::filesystem::path& dir, const std::string& name,
                         const std::string& id, const std::string& backend = "cpu",
                         const std::string& archs = "") {
  write(dir / "metadata.json", metadata_json(name, id, backend, archs));
  write(dir / "__init__.py", "x = 1\n");
}

}  // namespace kernelhub::loader::testing
