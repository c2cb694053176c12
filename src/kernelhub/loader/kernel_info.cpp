// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/kernel_info.hpp>

#include <algorithm>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

hub::RepoRef kernel_repo(const hub::RepoId& repo) {
  return hub::RepoRef{repo, hub::RepoType::kernel};
}

// The names that parse as variants, sorted: the reference skips the others (with a warning
// for a Hub listing).
std::vector<std::string> parsable(std::vector<std::string> names) {
  std::erase_if(names, [](const std::string& name) { return !variants::parse_variant(name); });
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> local_variant_names(const fs::path& build) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(build, ec)) {
    if (entry.is_directory(ec)) {
      names.push_back(entry.path().filename().string());
    }
  }
  return parsable(std::move(names));
}

void add_metadata(KernelInfo& info, const std::string& variant, std::string_view text,
                  const std::string& file_name) {
  auto summary = read_kernel_summary(text, file_name);
  if (!summary) {
    info.warnings.push_back(fmt::format("cannot read the metadata of {}: {}", variant,
                                        summary.error().message));
    return;
  }
  info.summary = std::move(*summary);
  info.metadata_variant = variant;
}

std::string value_or_dash(const std::optional<std::string>& value) {
  return value ? *value : "-";
}

ordered_json optional_json(const std::optional<std::string>& value) {
  return value ? ordered_json(*value) : ordered_json();
}

// Every folder under build/ of `commit`, variant or not. listing() answers from
// trees/<sha>.json when cached and asks the server only online.
util::Expected<std::vector<std::string>> variant_folders_at(const cache::HubCache& cache,
                                                            const hub::RepoId& repo,
                                                            const std::string& commit) {
  auto listing = cache.listing(kernel_repo(repo), commit);
  if (listing) {
    return cache::variant_names(*listing);
  }
  if (!cache.offline()) {
    return tl::unexpected(listing.error());
  }
  return cache::kernel_variants(cache, repo, commit);
}

}  // namespace

util::Expected<ResolvedRevision> resolve_info_revision(const cache::HubCache& cache,
                                                       const hub::RepoId& repo,
                                                       const InfoRequest& request) {
  if (request.version && request.revision) {
    return util::fail("only one of --revision or --version can be specified");
  }
  ResolvedRevision resolved;
  std::optional<unsigned> number = request.version;
  if (request.revision) {
    resolved.label = *request.revision;
    resolved.commit = KH_TRY(cache.resolve_revision(kernel_repo(repo), *request.revision));
    return resolved;
  }
  const auto versions = KH_TRY(cache::kernel_versions(cache, repo));
  if (!number && versions.empty()) {
    resolved.label = "main";
    resolved.commit = KH_TRY(cache.resolve_revision(kernel_repo(repo), "main"));
    return resolved;
  }
  if (!number) {
    number = versions.back().number;
  }
  resolved.commit = KH_TRY(cache::resolve_kernel_version(cache, repo, *number)).commit;
  resolved.label = fmt::format("v{}", *number);
  if (versions.back().number > *number) {
    resolved.warning = fmt::format("You are using version {} of '{}', but version {} is available.",
                                   *number, repo.str(), versions.back().number);
  }
  if (!cache.offline()) {
    // The reference resolves versions offline from refs/v<N>; keep them for a later offline run.
    if (auto done = cache.repo(kernel_repo(repo)).write_ref(resolved.label, resolved.commit); !done) {
      return tl::unexpected(done.error());
    }
  }
  return resolved;
}

util::Expected<std::vector<std::string>> variant_names_at(const cache::HubCache& cache,
                                                          const hub::RepoId& repo,
                                                          const std::string& commit) {
  return parsable(KH_TRY(variant_folders_at(cache, repo, commit)));
}

util::Expected<KernelSummary> read_kernel_summary(std::string_view text, const std::string& file_name) {
  const auto metadata = KH_TRY(metadata::parse_metadata(text, file_name));
  KernelSummary summary;
  if (metadata.kernels_minver) {
    summary.kernels_minver = metadata::kernels_minver_text(*metadata.kernels_minver);
  }
  summary.name = metadata.name.str();
  summary.version = metadata.version;
  summary.license = metadata.license;
  if (metadata.upstream) {
    summary.upstream = metadata.upstream->normalized();
  }
  if (metadata.source) {
    summary.source = metadata.source->normalized();
  }
  summary.python_depends = metadata.python_depends;
  return summary;
}

std::vector<std::string> variant_backends(std::span<const std::string> names) {
  std::set<std::string> backends;
  for (const auto& name : names) {
    const auto variant = variants::parse_variant(name);
    if (!variant) {
      continue;
    }
    backends.insert(variant->is_arch() ? std::string(types::to_string(variant->backend.kind))
                                       : variant->noarch_backend);
  }
  return {backends.begin(), backends.end()};
}

std::string python_path_string(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find('/', start), text.size());
    const auto part = text.substr(start, end - start);
    if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  const bool absolute = !text.empty() && text.front() == '/';
  const auto joined = fmt::format("{}", fmt::join(parts, "/"));
  if (absolute) {
    return "/" + joined;
  }
  return joined.empty() ? "." : joined;
}

util::Expected<KernelInfo> local_kernel_info(const fs::path& repo_path) {
  const auto shown = python_path_string(repo_path.string());
  const auto build = repo_path / "build";
  KernelInfo info;
  info.path = shown;
  info.variants = local_variant_names(build);
  if (info.variants.empty()) {
    return util::fail(fmt::format("no build variants found in: {}",
                                  python_path_string((fs::path(shown) / "build").string())));
  }
  for (const auto& variant : info.variants) {
    const auto file = build / variant / "metadata.json";
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      continue;
    }
    // The reference lets an invalid metadata.json end the command here.
    info.summary = KH_TRY(read_kernel_summary(KH_TRY(util::read_file(file)), file.string()));
    info.metadata_variant = variant;
    break;
  }
  info.backends = variant_backends(info.variants);
  return info;
}

util::Expected<KernelInfo> hub_kernel_info(const cache::HubCache& cache, const hub::RepoId& repo,
                                           const InfoRequest& request) {
  const auto resolved = KH_TRY(resolve_info_revision(cache, repo, request));
  KernelInfo info;
  info.repo_id = repo.str();
  info.revision = resolved.label;
  info.commit = resolved.commit;
  if (resolved.warning) {
    info.warnings.push_back(*resolved.warning);
  }
  const auto folders = KH_TRY(variant_folders_at(cache, repo, resolved.commit));
  for (const auto& folder : folders) {
    if (!variants::parse_variant(folder)) {
      // The reference's warning, word for word (its doubled "variant" included).
      info.warnings.push_back(fmt::format(
          "Repository {} (revision: {}) contains invalid build variant variant: '{}'", repo.str(),
          resolved.label, folder));
    }
  }
  info.variants = parsable(folders);
  if (info.variants.empty()) {
    return util::fail(fmt::format("no build variants found in {} (revision: {})", repo.str(),
                                  resolved.label));
  }
  info.backends = variant_backends(info.variants);
  const auto ref = kernel_repo(repo);
  if (cache.offline()) {
    for (const auto& variant : info.variants) {
      const auto file = cache.repo(ref).snapshot_file(resolved.commit, "build/" + variant + "/metadata.json");
      std::error_code ec;
      if (fs::exists(file, ec)) {
        add_metadata(info, variant, KH_TRY(util::read_file(file)), file.string());
        return info;
      }
    }
    return util::fail(fmt::format(
        "no metadata.json of {} at revision {} is in the local cache ({}) and Hugging Face Hub "
        "is in offline mode; run `kernelhub download {} --revision {}` while online first",
        repo.str(), resolved.label, cache.repo(ref).folder().string(), repo.str(), resolved.label));
  }
  const auto& first = info.variants.front();
  auto file = cache.file_download(ref, resolved.commit, "build/" + first + "/metadata.json");
  if (!file) {
    info.warnings.push_back(fmt::format("cannot download the metadata of {}: {}", first,
                                        file.error().message));
    return info;
  }
  auto text = util::read_file(*file);
  if (!text) {
    info.warnings.push_back(text.error().message);
    return info;
  }
  add_metadata(info, first, *text, file->string());
  return info;
}

ordered_json render_info_json(const KernelInfo& info) {
  ordered_json out = ordered_json::object();
  if (info.repo_id) {
    out["repo_id"] = *info.repo_id;
    out["revision"] = optional_json(info.revision);
  } else {
    out["path"] = optional_json(info.path);
  }
  if (info.summary) {
    const auto& summary = *info.summary;
    out["name"] = summary.name;
    out["version"] = summary.version;
    out["kernels_minver"] = optional_json(summary.kernels_minver);
    out["license"] = summary.license;
    out["upstream"] = optional_json(summary.upstream);
    out["source"] = optional_json(summary.source);
    out["python_depends"] = summary.python_depends;
  }
  out["backends"] = info.backends;
  return out;
}

std::string render_info_text(const KernelInfo& info) {
  std::string out;
  if (info.repo_id) {
    out += fmt::format("Repository: {}\nRevision: {}\n", *info.repo_id, value_or_dash(info.revision));
  } else {
    out += fmt::format("Path: {}\n", value_or_dash(info.path));
  }
  const auto* summary = info.summary ? &*info.summary : nullptr;
  const auto field = [&](auto member) -> std::string {
    return summary ? value_or_dash(member(*summary)) : "-";
  };
  out += fmt::format("Name: {}\n", field([](const KernelSummary& s) { return std::optional(s.name); }));
  out += fmt::format("Version: {}\n", field([](const KernelSummary& s) {
                       return std::optional(std::to_string(s.version));
                     }));
  out += fmt::format("Minimum kernels version: {}\n",
                     field([](const KernelSummary& s) { return s.kernels_minver; }));
  out += fmt::format("License: {}\n", field([](const KernelSummary& s) { return std::optional(s.license); }));
  out += fmt::format("Upstream: {}\n", field([](const KernelSummary& s) { return s.upstream; }));
  out += fmt::format("Source: {}\n", field([](const KernelSummary& s) { return s.source; }));
  const bool has_depends = summary && !summary->python_depends.empty();
  out += fmt::format("Python dependencies: {}\n",
                     has_depends ? fmt::format("{}", fmt::join(summary->python_depends, ", ")) : "-");
  out += fmt::format("Backends: {}\n", fmt::join(info.backends, ", "));
  return out;
}

}  // namespace kernelhub::loader
