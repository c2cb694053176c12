// SPDX-License-Identifier: Apache-2.0
// kernelhub-testtool SUBCOMMAND ARGS...: prints one JSON document on stdout. Subcommands that
// take strings read them from the arguments, or as a JSON array on stdin when none are given
// (generated differential cases are many, and a process per case is slow).
#include <cstdio>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/builder/torch_environment.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/git_url.hpp>
#include <kernelhub/types/kernel_name.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/file_io.hpp>

#include "hub_commands.hpp"
#include "variants_commands.hpp"

namespace {

using nlohmann::json;
using namespace kernelhub;
using Args = std::vector<std::string>;

json inputs(const Args& args) {
  if (!args.empty()) {
    return json(args);
  }
  const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  return json::parse(text);
}

json failure(const std::string& message) { return {{"ok", false}, {"error", message}}; }

json git_status_json(const metadata::GitStatus& status) {
  return {{"commit", status.commit.str()}, {"dirty", status.dirty}};
}

json digest_json(const metadata::Digest& digest) {
  return {{"algorithm", metadata::to_string(digest.algorithm)}, {"files", digest.files}};
}

util::Expected<metadata::Digest> digest_from_json(const json& value) {
  auto algorithm = metadata::digest_algorithm_from_name(value.at("algorithm").get<std::string>());
  if (!algorithm) {
    return util::fail("bad algorithm");
  }
  return metadata::Digest{*algorithm,
                          value.at("files").get<std::map<std::string, std::string>>()};
}

// Every field, normalised the way the reference's Python bindings show them.
json metadata_json(const metadata::Metadata& m) {
  json out = {{"name", m.name.str()},
              {"python_name", m.name.python_name()},
              {"id", m.id},
              {"version", m.version},
              {"license", m.license},
              {"upstream", m.upstream ? json(m.upstream->normalized()) : json()},
              {"source", m.source ? json(m.source->normalized()) : json()},
              {"python_depends", m.python_depends},
              {"backend",
               {{"type", types::to_string(m.backend.type)},
                {"archs", m.backend.archs ? json(*m.backend.archs) : json()}}},
              {"digest", m.digest ? digest_json(*m.digest) : json()},
              {"is_dirty", m.is_dirty()}};
  out["kernel_depends"] = json::array();
  for (const auto& dependency : m.kernel_depends) {
    out["kernel_depends"].push_back(
        {{"repo_id", dependency.repo_id},
         {"version", dependency.version ? json(*dependency.version) : json()},
         {"revision", dependency.revision ? json(*dependency.revision) : json()}});
  }
  if (m.provenance) {
    const auto& builder = m.provenance->kernel_builder;
    out["provenance"] = {
        {"kernel_builder",
         {{"version", builder.version},
          {"git", builder.git ? git_status_json(*builder.git) : json()}}},
        {"kernel", m.provenance->kernel ? git_status_json(*m.provenance->kernel) : json()}};
  } else {
    out["provenance"] = nullptr;
  }
  return out;
}

json metadata_parse(const Args& args) {
  json results = json::array();
  for (const auto& path : args) {
    auto parsed = metadata::read_metadata_file(path);
    if (!parsed) {
      results.push_back(failure(parsed.error().message));
      continue;
    }
    results.push_back({{"ok", true},
                       {"metadata", metadata_json(*parsed)},
                       {"written", metadata::to_json(*parsed)}});
  }
  return args.size() == 1 ? results[0] : results;
}

json version_normalize(const Args& args) {
  json results = json::array();
  for (const auto& input : inputs(args)) {
    auto version = types::Version::parse(input.get<std::string>());
    results.push_back(version ? json{{"ok", true},
                                     {"normalized", version->to_string()},
                                     {"components", version->components()}}
                              : failure(version.error().message));
  }
  return results;
}

// Input: [[a, b], ...]; output: -1, 0 or 1 for each pair, null where one does not parse.
json version_compare(const Args&) {
  json results = json::array();
  for (const auto& pair : inputs({})) {
    auto a = types::Version::parse(pair[0].get<std::string>());
    auto b = types::Version::parse(pair[1].get<std::string>());
    results.push_back(!a || !b ? json() : json(*a < *b ? -1 : *a == *b ? 0 : 1));
  }
  return results;
}

json kernel_name_check(const Args& args) {
  json results = json::array();
  for (const auto& input : inputs(args)) {
    auto name = types::KernelName::parse(input.get<std::string>());
    results.push_back(name ? json{{"ok", true}, {"python_name", name->python_name()}}
                           : failure(name.error().message));
  }
  return results;
}

json git_url(const Args& args) {
  json results = json::array();
  for (const auto& input : inputs(args)) {
    auto url = types::GitUrl::parse(input.get<std::string>());
    results.push_back(url ? json{{"ok", true},
                                 {"normalized", url->normalized()},
                                 {"original", url->original()},
                                 {"scheme", url->scheme()}}
                          : failure(url.error().message));
  }
  return results;
}

json backend_parse(const Args& args) {
  json results = json::array();
  for (const auto& input : inputs(args)) {
    auto backend = types::parse_backend(input.get<std::string>());
    results.push_back(backend ? json{{"ok", true}, {"backend", types::to_string(*backend)}}
                              : failure(backend.error().message));
  }
  return results;
}

// digest DIR [sha256|sha512]
json digest(const Args& args) {
  auto algorithm = metadata::digest_algorithm_from_name(args.size() > 1 ? args[1] : "sha256");
  if (args.empty() || !algorithm) {
    return failure("usage: digest DIR [sha256|sha512]");
  }
  auto result = metadata::hash_variant(*algorithm, args[0]);
  if (!result) {
    return failure(result.error().message);
  }
  json out = digest_json(*result);
  out["ok"] = true;
  return out;
}

// digest-validate REFERENCE.json ACTUAL.json, each {"algorithm", "files"}.
json digest_validate(const Args& args) {
  if (args.size() != 2) {
    return failure("usage: digest-validate REFERENCE.json ACTUAL.json");
  }
  std::vector<metadata::Digest> digests;
  for (const auto& path : args) {
    auto text = util::read_file(path);
    auto parsed = text ? digest_from_json(json::parse(*text)) : tl::unexpected(text.error());
    if (!parsed) {
      return failure(parsed.error().message);
    }
    digests.push_back(*parsed);
  }
  const auto violations = metadata::validate(digests[0], digests[1]);
  json lines = json::array();
  for (const auto& violation : violations) {
    lines.push_back(violation.to_string());
  }
  return {{"ok", violations.empty()},
          {"violations", lines},
          {"message", violations.empty() ? json() : json(metadata::describe(violations))}};
}

// kernel-id NAME BACKEND (--unique ID | --tree TREE_ID [--dirty] | --random U64)
json kernel_id(const Args& args) {
  if (args.size() < 2) {
    return failure("usage: kernel-id NAME BACKEND [--unique ID|--tree ID [--dirty]|--random N]");
  }
  auto name = types::KernelName::parse(args[0]);
  auto backend = types::parse_backend(args[1]);
  if (!name || !backend) {
    return failure(!name ? name.error().message : backend.error().message);
  }
  metadata::UniqueIdSource source;
  std::optional<std::uint64_t> random;
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--unique" && i + 1 < args.size()) {
      source.given = args[++i];
    } else if (args[i] == "--tree" && i + 1 < args.size()) {
      source.git_tree_id = args[++i];
    } else if (args[i] == "--dirty") {
      source.git_dirty = true;
    } else if (args[i] == "--random" && i + 1 < args.size()) {
      random = std::stoull(args[++i]);
    }
  }
  const auto unique = random ? metadata::unique_id(source, *random) : metadata::unique_id(source);
  auto id = metadata::checked_kernel_id(*name, *backend, unique);
  return id ? json{{"ok", true}, {"id", *id}, {"unique", unique}} : failure(id.error().message);
}

// torch-probe-script: the program kernel-builder runs to learn a Python's torch, to run with
// other Pythons and torch layouts than this machine's.
json torch_probe_script(const Args&) {
  return {{"ok", true}, {"script", std::string(builder::torch_probe_script())}};
}

const std::map<std::string, std::function<json(const Args&)>> k_commands = {
    {"metadata-parse", metadata_parse},       {"version-normalize", version_normalize},
    {"version-compare", version_compare},     {"kernel-name-check", kernel_name_check},
    {"git-url", git_url},                     {"backend-parse", backend_parse},
    {"digest", digest},                       {"digest-validate", digest_validate},
    {"kernel-id", kernel_id},
    {"variants-parse", testtool::variants_parse},
    {"variants-resolve", testtool::variants_resolve},
    {"hub", testtool::hub_call},
    {"torch-probe-script", torch_probe_script},
};

}  // namespace

int main(int argc, char** argv) {
  const auto command = argc > 1 ? k_commands.find(argv[1]) : k_commands.end();
  if (command == k_commands.end()) {
    std::cerr << "usage: kernelhub-testtool COMMAND ARGS...; commands:";
    for (const auto& [name, handler] : k_commands) {
      std::cerr << " " << name;
    }
    std::cerr << "\n";
    return 2;
  }
  const Args args(argv + 2, argv + argc);
  std::cout << command->second(args).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  return 0;
}
