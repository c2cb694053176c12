// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/import_policy.hpp>

#include <cstdio>
#include <cstdlib>
#include <span>

#include <nlohmann/json.hpp>

#include <kernelhub/util/embedded_file.hpp>

namespace kernelhub::checks {

std::span<const util::EmbeddedFile> embedded_checks_data();

util::Expected<ImportPolicy> ImportPolicy::parse(std::string_view json) {
  try {
    const auto document = nlohmann::json::parse(json);
    ImportPolicy policy;
    for (const auto& name : document.at("stdlib")) {
      policy.m_stdlib.insert(name.get<std::string>());
    }
    const auto& torch = document.at("torch");
    for (const auto& name : torch.at("modules")) {
      policy.m_torch.insert(name.get<std::string>());
    }
    for (const auto& [package, modules] : torch.at("requires").items()) {
      for (const auto& name : modules) {
        policy.m_torch.insert(name.get<std::string>());
      }
    }
    return policy;
  } catch (const nlohmann::json::exception& error) {
    return util::fail(std::string("python_imports.json: ") + error.what());
  }
}

const ImportPolicy& ImportPolicy::builtin() {
  static const ImportPolicy instance = [] {
    const auto* file = util::find_embedded(embedded_checks_data(), "python_imports.json");
    auto parsed = file != nullptr ? parse(file->data)
                                  : util::fail("python_imports.json is not embedded");
    if (!parsed) {
      // The file is compiled in and covered by unit tests: failing here is a build defect.
      std::fprintf(stderr, "internal error: %s\n", parsed.error().message.c_str());
      std::abort();
    }
    return std::move(parsed).value();
  }();
  return instance;
}

bool ImportPolicy::is_stdlib(std::string_view top_level) const {
  return m_stdlib.contains(top_level);
}

bool ImportPolicy::comes_with_torch(std::string_view top_level) const {
  return m_torch.contains(top_level);
}

}  // namespace kernelhub::checks
