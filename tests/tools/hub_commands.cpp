// SPDX-License-Identifier: Apache-2.0
#include "hub_commands.hpp"

#include <algorithm>

#include <kernelhub/hub/hub_client.hpp>

namespace kernelhub::testtool {

namespace {

using nlohmann::json;

json hub_failure(const hub::HubError& error) {
  return {{"ok", false}, {"kind", hub::error_kind_name(error.kind)}, {"error", error.message}};
}

json usage() {
  return {{"ok", false}, {"kind", "usage"},
          {"error", "usage: hub (refs|info|tree|metadata|download) REPO ... [--type T]"}};
}

json metadata_json(const hub::FileMetadata& m) {
  return {{"commit", m.commit}, {"etag", m.etag}, {"size", m.size}, {"location", m.location}};
}

}  // namespace

json hub_call(const std::vector<std::string>& all_args) {
  std::vector<std::string> args;
  hub::RepoType type = hub::RepoType::kernel;
  bool recursive = false;
  for (std::size_t i = 0; i < all_args.size(); ++i) {
    if (all_args[i] == "--type" && i + 1 < all_args.size()) {
      type = hub::parse_repo_type(all_args[++i]).value_or(hub::RepoType::kernel);
    } else if (all_args[i] == "--recursive") {
      recursive = true;
    } else {
      args.push_back(all_args[i]);
    }
  }
  if (args.size() < 2) {
    return usage();
  }
  auto id = hub::RepoId::parse(args[1]);
  if (!id) {
    return {{"ok", false}, {"kind", "invalid_argument"}, {"error", id.error().message}};
  }
  const hub::RepoRef repo{*id, type};
  hub::ClientOptions options;
  options.progress_bar = false;
  const hub::HubClient client(hub::Endpoint::from_environment(), options);
  const std::string& op = args[0];
  if (op == "refs") {
    auto refs = client.list_refs(repo);
    if (!refs) {
      return hub_failure(refs.error());
    }
    json branches = json::object();
    for (const auto& ref : refs->branches) {
      branches[ref.name] = ref.target_commit;
    }
    json tags = json::object();
    for (const auto& ref : refs->tags) {
      tags[ref.name] = ref.target_commit;
    }
    return {{"ok", true}, {"branches", branches}, {"tags", tags}};
  }
  if (op == "info") {
    auto info = args.size() > 2 ? client.repo_info(repo, args[2]) : client.repo_info(repo);
    if (!info) {
      return hub_failure(info.error());
    }
    return {{"ok", true}, {"id", info->id}, {"sha", info->sha}, {"siblings", info->siblings}};
  }
  if (op == "tree" && args.size() >= 3) {
    auto tree = client.list_tree(repo, args[2], args.size() > 3 ? args[3] : std::string(),
                                 recursive ? hub::Recursive::yes : hub::Recursive::no);
    if (!tree) {
      return hub_failure(tree.error());
    }
    json entries = json::array();
    for (const auto& entry : *tree) {
      entries.push_back({{"path", entry.path},
                         {"type", entry.kind == hub::TreeEntry::Kind::file ? "file" : "directory"},
                         {"oid", entry.oid},
                         {"size", entry.size}});
    }
    return {{"ok", true}, {"entries", entries}};
  }
  if (op == "metadata" && args.size() == 4) {
    auto metadata = client.file_metadata(repo, args[2], args[3]);
    if (!metadata) {
      json out = hub_failure(metadata.error());
      out["repo_commit"] = metadata.error().repo_commit.value_or("");
      return out;
    }
    json out = metadata_json(*metadata);
    out["ok"] = true;
    return out;
  }
  if (op == "download" && args.size() >= 5) {
    std::vector<hub::DownloadTask> tasks;
    for (std::size_t i = 4; i < args.size(); ++i) {
      tasks.push_back(hub::DownloadTask{repo, args[2], args[i],
                                        std::filesystem::path(args[3]) / args[i], std::nullopt});
    }
    const auto results = client.download_all(tasks);
    json files = json::object();
    bool ok = true;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i]) {
        files[tasks[i].path] = metadata_json(results[i]->metadata);
      } else {
        ok = false;
        files[tasks[i].path] = hub_failure(results[i].error());
      }
    }
    return {{"ok", ok}, {"files", files}};
  }
  return usage();
}

}  // namespace kernelhub::testtool
