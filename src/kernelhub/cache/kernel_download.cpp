// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/kernel_download.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kernelhub::cache {

namespace fs = std::filesystem;

namespace {

hub::RepoRef kernel_repo(const hub::RepoId& repo) {
  return hub::RepoRef{repo, hub::RepoType::kernel};
}

// The reference's ignore patterns for every variant download (kernels' resolver).
const std::vector<std::string>& bytecode_ignore_patterns() {
  static const std::vector<std::string> patterns = {"*.pyc", "**/__pycache__/**"};
  return patterns;
}

std::vector<KernelVersion> cached_versions(const HubCache& cache, const hub::RepoId& repo) {
  std::map<unsigned, std::string> found;
  // kernels reads the "kernel" folder and then the legacy "model" one; we keep the first.
  for (const auto type : {hub::RepoType::kernel, hub::RepoType::model}) {
    const auto folder = cache.repo(hub::RepoRef{repo, type});
    for (const auto& name : folder.list_refs()) {
      const auto number = parse_version_branch(name);
      if (!number || found.count(*number) != 0) {
        continue;
      }
      if (auto commit = folder.read_ref(name)) {
        found.emplace(*number, *commit);
      }
    }
  }
  std::vector<KernelVersion> versions;
  for (auto& [number, commit] : found) {
    versions.push_back({number, std::move(commit)});
  }
  return versions;
}

std::string version_list(const std::vector<KernelVersion>& versions) {
  std::vector<unsigned> numbers;
  for (const auto& version : versions) {
    numbers.push_back(version.number);
  }
  return fmt::format("{}", fmt::join(numbers, ", "));
}

util::Expected<KernelVersion> pick_version(const std::vector<KernelVersion>& versions, unsigned number,
                                           bool offline, const hub::RepoId& repo) {
  const auto found = std::find_if(versions.begin(), versions.end(),
                                  [&](const KernelVersion& v) { return v.number == number; });
  if (found != versions.end()) {
    return *found;
  }
  if (offline && versions.empty()) {
    return util::fail(fmt::format(
        "Version {} of '{}' is not available in the local cache and Hugging Face Hub is in "
        "offline mode. Download the kernel while online first, or pass an explicit "
        "`revision=<commit>`.",
        number, repo.str()));
  }
  return util::fail(fmt::format("Version {} not found, available versions: {}", number,
                                version_list(versions)));
}

}  // namespace

std::optional<unsigned> parse_version_branch(std::string_view name) {
  if (name.size() < 2 || name.front() != 'v' || name.size() > 10) {
    return std::nullopt;
  }
  unsigned value = 0;
  for (const char c : name.substr(1)) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value;
}

util::Expected<std::vector<KernelVersion>> kernel_versions(const HubCache& cache, const hub::RepoId& repo) {
  if (cache.offline()) {
    return cached_versions(cache, repo);
  }
  auto refs = cache.client().list_refs(kernel_repo(repo));
  if (!refs) {
    return util::fail(refs.error().message);
  }
  std::map<unsigned, std::string> found;
  for (const auto& branch : refs->branches) {
    if (const auto number = parse_version_branch(branch.name); number && hub::is_commit_sha(branch.target_commit)) {
      found[*number] = branch.target_commit;
    }
  }
  std::vector<KernelVersion> versions;
  for (auto& [number, commit] : found) {
    versions.push_back({number, std::move(commit)});
  }
  return versions;
}

util::Expected<KernelVersion> resolve_kernel_version(const HubCache& cache, const hub::RepoId& repo,
                                                     unsigned number) {
  return pick_version(KH_TRY(kernel_versions(cache, repo)), number, cache.offline(), repo);
}

std::vector<std::string> variant_names(const TreeListing& listing) {
  std::set<std::string> names;
  for (const auto& [path, file] : listing) {
    // An unsafe name (listed, never downloaded) names no variant.
    if (path.rfind("build/", 0) != 0 || !is_safe_repo_path(path)) {
      continue;
    }
    const auto slash = path.find('/', 6);
    if (slash != std::string::npos && slash > 6) {
      names.insert(path.substr(6, slash - 6));
    }
  }
  return {names.begin(), names.end()};
}

util::Expected<std::vector<std::string>> kernel_variants(const HubCache& cache, const hub::RepoId& repo,
                                                         const std::string& commit) {
  const auto ref = kernel_repo(repo);
  if (!cache.offline()) {
    return variant_names(KH_TRY(cache.listing(ref, commit)));
  }
  const auto build = cache.repo(ref).snapshot_dir(commit) / "build";
  std::error_code ec;
  if (!fs::is_directory(build, ec)) {
    return util::fail(offline_miss_message(ref, commit, cache.root()));
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(build, ec)) {
    if (entry.is_directory(ec)) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

util::Expected<KernelDownload> download_kernel(const HubCache& cache, const hub::RepoId& repo,
                                               const KernelDownloadRequest& request) {
  if (request.version.has_value() == request.revision.has_value()) {
    return util::fail("give exactly one of a version and a revision");
  }
  const auto ref = kernel_repo(repo);
  KernelDownload result;
  std::string label;
  if (request.version) {
    const auto versions = KH_TRY(kernel_versions(cache, repo));
    result.commit = KH_TRY(pick_version(versions, *request.version, cache.offline(), repo)).commit;
    label = fmt::format("v{}", *request.version);
    if (!versions.empty() && versions.back().number > *request.version) {
      result.warning = fmt::format("You are using version {} of '{}', but version {} is available.",
                                   *request.version, repo.str(), versions.back().number);
    }
  } else {
    label = *request.revision;
    result.commit = KH_TRY(cache.resolve_revision(ref, *request.revision));
  }
  result.variants = KH_TRY(kernel_variants(cache, repo, result.commit));
  if (request.system) {
    result.resolution = variants::resolve_variant_names(*request.system, result.variants);
  } else if (!request.all_variants) {
    return util::fail("choosing a variant needs the system it is for");
  }

  std::vector<std::string> allow;
  if (request.all_variants) {
    allow.push_back("build/*");
  } else {
    const auto* best = result.resolution.best();
    if (best == nullptr) {
      return util::fail(fmt::format("Cannot find a build variant for this system in {} (revision: {}):\n\n{}",
                                    repo.str(), label, variants::render_trace(result.resolution.trace)));
    }
    // The folder as the repository spells it: names normalise ("torch2010" -> "torch210").
    for (const auto& name : result.variants) {
      if (auto parsed = variants::parse_variant(name); parsed && *parsed == *best) {
        result.chosen = name;
        break;
      }
    }
    if (!result.chosen) {
      return util::fail(fmt::format("variant \"{}\" is not among the repository's folders",
                                    variants::to_string(*best)));
    }
    allow.push_back(fmt::format("build/{}/*", *result.chosen));
  }
  const PatternFilter filter(allow, bytecode_ignore_patterns());
  result.snapshot = KH_TRY(cache.snapshot_download(ref, result.commit, filter));
  result.path = result.chosen ? result.snapshot.path / "build" / *result.chosen : result.snapshot.path;
  if (request.version && !cache.offline()) {
    // kernels resolves versions offline from refs/v<N>, which no download by sha writes.
    if (auto done = cache.repo(ref).write_ref(label, result.commit); !done) {
      return tl::unexpected(done.error());
    }
  }
  return result;
}

}  // namespace kernelhub::cache
