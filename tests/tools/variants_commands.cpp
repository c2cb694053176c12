// SPDX-License-Identifier: Apache-2.0
#include "variants_commands.hpp"

#include <iostream>
#include <iterator>
#include <optional>

#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/system.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::testtool {

namespace {

using nlohmann::json;
using namespace kernelhub::variants;

json read_cases(const std::vector<std::string>& args) {
  if (!args.empty()) {
    return json(args);
  }
  // Read the whole input first: parsing straight from istreambuf_iterators never returns.
  const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  return json::parse(text);
}

std::optional<ReleaseVersion> optional_version(const json& system, const char* key) {
  if (!system.contains(key) || system[key].is_null()) {
    return std::nullopt;
  }
  return ReleaseVersion::parse(system[key].get<std::string>()).value();
}

const char* framework_name(Framework framework) {
  switch (framework) {
    case Framework::torch:
      return "torch";
    case Framework::torch_stable_abi:
      return "torch-stable-abi";
    case Framework::tvm_ffi:
      return "tvm-ffi";
    case Framework::torch_noarch:
      break;
  }
  return "torch-noarch";
}

SystemInfo system_from_json(const json& input) {
  SystemInfo system;
  system.cpu = input.at("cpu").get<std::string>();
  system.os = input.at("os").get<std::string>();
  system.macos_version = optional_version(input, "macos");
  system.torch_version = optional_version(input, "torch");
  if (input.contains("cxx11") && !input["cxx11"].is_null()) {
    system.cxx11_abi = input["cxx11"].get<bool>();
  }
  system.tvm_ffi_version = optional_version(input, "tvm_ffi");
  system.backend.kind = types::parse_backend(input.at("backend").get<std::string>()).value();
  if (const auto version = optional_version(input, "backend_version")) {
    system.backend.version = *version;
  }
  system.free_threaded = input.value("free_threaded", false);
  return system;
}

json resolve_case(const json& input) {
  auto system = system_from_json(input.at("system"));
  std::optional<std::string> requested;
  if (input["system"].contains("requested_backend") && !input["system"]["requested_backend"].is_null()) {
    requested = input["system"]["requested_backend"].get<std::string>();
  }
  auto selected = select_backend(system.backend, requested);
  if (!selected) {
    return {{"ok", false}, {"error", selected.error().message}};
  }
  system.backend = *selected;

  const auto names = input.at("variants").get<std::vector<std::string>>();
  const auto resolution = resolve_variant_names(system, names);
  json trace = json::array();
  for (const auto& decision : resolution.trace) {
    trace.push_back({{"variant", to_string(decision.variant)},
                     {"accepted", decision.accepted()},
                     {"reason", decision.rejection ? json(*decision.rejection) : json()}});
  }
  return {{"ok", true},
          {"trace", trace},
          {"text", render_trace(resolution.trace)},
          {"warning", resolution.warning ? json(*resolution.warning) : json()},
          {"skipped", resolution.skipped}};
}

}  // namespace

json variants_parse(const std::vector<std::string>& args) {
  json results = json::array();
  for (const auto& input : read_cases(args)) {
    auto parsed = parse_variant(input.get<std::string>());
    if (!parsed) {
      results.push_back({{"ok", false}, {"error", parsed.error().message}});
      continue;
    }
    results.push_back({{"ok", true},
                       {"name", to_string(*parsed)},
                       {"framework", framework_name(parsed->framework)},
                       {"arch", parsed->is_arch()}});
  }
  return results;
}

json variants_resolve(const std::vector<std::string>& args) {
  json results = json::array();
  for (const auto& input : read_cases(args)) {
    results.push_back(resolve_case(input));
  }
  return results;
}

}  // namespace kernelhub::testtool
