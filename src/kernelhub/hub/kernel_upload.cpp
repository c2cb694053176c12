// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/kernel_upload.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/hub/progress_bar.hpp>

namespace kernelhub::hub {

namespace {

namespace fs = std::filesystem;

bool is_benchmark_script(std::string_view name) {
  return name.starts_with("benchmark") && name.ends_with(".py");
}

// Python byte code left by tests that imported the variant is not part of a build.
bool is_bytecode(const fs::path& relative) {
  if (relative.extension() == ".pyc") {
    return true;
  }
  return std::any_of(relative.begin(), relative.end(),
                     [](const fs::path& part) { return part == "__pycache__"; });
}

void log_line(const KernelUploadRequest& request, const std::string& line) {
  if (request.log) {
    request.log(line);
  }
}

HubResult<std::vector<RemoteFile>> remote_files(const HubClient& client, const RepoRef& repo,
                                                std::string_view revision) {
  auto tree = KH_HUB_TRY(client.list_tree(repo, revision, {}, Recursive::yes));
  std::vector<RemoteFile> files;
  for (auto& entry : tree) {
    if (entry.kind != TreeEntry::Kind::file) {
      continue;
    }
    RemoteFile file{std::move(entry.path), std::move(entry.oid), std::nullopt};
    if (entry.lfs) {
      file.sha256 = entry.lfs->sha256;
    }
    files.push_back(std::move(file));
  }
  return files;
}

std::optional<std::string> branch_head(const Refs& refs, std::string_view branch) {
  for (const auto& ref : refs.branches) {
    if (ref.name == branch) {
      return ref.target_commit;
    }
  }
  return std::nullopt;
}

// The pull request number from its URL (".../discussions/7" → "7").
std::string pull_request_number(std::string_view url) {
  const auto slash = url.rfind('/');
  return std::string(slash == std::string_view::npos ? url : url.substr(slash + 1));
}

struct BranchPlan {
  std::string branch;
  std::optional<std::string> head;
  std::vector<CommitOperation> operations;
};

// Drops additions whose bytes the remote already has, asks the server about the rest
// (shouldIgnore, and the upload mode), and sends the files it marks `lfs` through the Git LFS
// batch API before their commit, as huggingface_hub's create_commit does.
HubResult<std::vector<CommitOperation>> additions(const HubClient& client,
                                                  const KernelUploadRequest& request,
                                                  std::string_view branch,
                                                  const std::vector<LocalFile>& files,
                                                  const std::vector<RemoteFile>& remote) {
  std::map<std::string, const RemoteFile*> by_path;
  for (const auto& file : remote) {
    by_path[file.path] = &file;
  }
  std::vector<const LocalFile*> changed;
  std::vector<PreuploadFile> preupload;
  for (const auto& file : files) {
    if (auto it = by_path.find(file.path_in_repo); it != by_path.end()) {
      auto same = unchanged(file, *it->second);
      if (!same) {
        return hub_fail(ErrorKind::io, same.error().message);
      }
      if (*same) {
        continue;
      }
    }
    std::error_code ec;
    const auto size = fs::file_size(file.source, ec);
    std::string sample(512, '\0');
    std::FILE* in = std::fopen(file.source.c_str(), "rb");
    if (ec || in == nullptr) {
      return hub_fail(ErrorKind::io, fmt::format("cannot read \"{}\"", file.source.string()));
    }
    sample.resize(std::fread(sample.data(), 1, sample.size(), in));
    std::fclose(in);
    changed.push_back(&file);
    preupload.push_back(PreuploadFile{file.path_in_repo, size, std::move(sample)});
  }
  std::vector<CommitOperation> operations;
  if (changed.empty()) {
    return operations;
  }
  const auto answers = KH_HUB_TRY(client.preupload(request.repo, branch, preupload, request.create_pr));
  std::map<std::string, const PreuploadAnswer*> answer_of;
  for (const auto& answer : answers) {
    answer_of[answer.path] = &answer;
  }
  std::vector<LfsFile> lfs_files;
  for (std::size_t i = 0; i < changed.size(); ++i) {
    const auto* file = changed[i];
    const auto it = answer_of.find(file->path_in_repo);
    if (it != answer_of.end() && it->second->should_ignore) {
      continue;
    }
    // An empty file is always committed as a regular one (huggingface_hub forces it).
    if (it != answer_of.end() && it->second->lfs && preupload[i].size > 0) {
      auto sha256 = sha256_of_file(file->source);
      if (!sha256) {
        return hub_fail(ErrorKind::io, sha256.error().message);
      }
      lfs_files.push_back(LfsFile{file->path_in_repo, file->source, *sha256, preupload[i].size});
      CommitOperation operation{CommitOperation::Kind::add_lfs_file, file->path_in_repo, std::nullopt, {}};
      operation.lfs_sha256 = std::move(*sha256);
      operation.lfs_size = preupload[i].size;
      operations.push_back(std::move(operation));
      continue;
    }
    operations.push_back(CommitOperation{CommitOperation::Kind::add_file, file->path_in_repo,
                                         file->source, {}});
  }
  if (!lfs_files.empty()) {
    std::uint64_t bytes = 0;
    for (const auto& file : lfs_files) {
      bytes += file.size;
    }
    log_line(request, fmt::format("Uploading {} file(s) to `{}` with Git LFS ({})", lfs_files.size(),
                                  branch, ProgressBar::format_bytes(bytes)));
    KH_HUB_TRY(client.upload_lfs_files(request.repo, branch, lfs_files));
  }
  return operations;
}

HubResult<void> commit_in_batches(const HubClient& client, const KernelUploadRequest& request,
                                  const BranchPlan& plan, KernelUploadOutcome& outcome) {
  const auto& operations = plan.operations;
  const bool card = plan.branch != request.branch;
  const std::string& message = card ? request.card_message : request.commit_message;
  const std::size_t count = (operations.size() + k_operations_per_commit - 1) / k_operations_per_commit;
  std::optional<std::string> parent = plan.head;
  std::string revision = plan.branch;
  CreatePr create_pr = request.create_pr;
  for (std::size_t batch = 0; batch < count; ++batch) {
    const auto first = operations.begin() + static_cast<std::ptrdiff_t>(batch * k_operations_per_commit);
    const auto last = operations.begin() +
                      static_cast<std::ptrdiff_t>(std::min(operations.size(), (batch + 1) * k_operations_per_commit));
    std::vector<CommitOperation> slice(first, last);
    std::string summary = batch_message(message, batch, count);
    std::string description = request.commit_description;
    if (create_pr == CreatePr::yes) {
      // This commit opens the pull request, which takes its title and description.
      if (!request.pr_title.empty()) {
        summary = card ? fmt::format("{} (card)", request.pr_title) : request.pr_title;
      }
      if (!request.pr_description.empty()) {
        description = request.pr_description;
      }
    }
    auto result = KH_HUB_TRY(client.commit(request.repo, revision, slice, summary, description,
                                           create_pr == CreatePr::yes ? std::nullopt : parent,
                                           create_pr));
    parent = result.commit_oid;
    if (create_pr == CreatePr::yes) {
      // Later batches go to the pull request's ref: one PR per branch.
      if (!result.pull_request_url) {
        return hub_fail(ErrorKind::invalid_response,
                        fmt::format("the Hub opened no pull request on \"{}\"", plan.branch));
      }
      revision = "refs/pr/" + pull_request_number(*result.pull_request_url);
      create_pr = CreatePr::no;
      parent.reset();
    }
    BranchCommit commit{plan.branch, result.commit_oid, result.commit_url, result.pull_request_url};
    if (!outcome.commits.empty() && outcome.commits.back().branch == plan.branch &&
        outcome.commits.back().pull_request_url) {
      commit.pull_request_url = outcome.commits.back().pull_request_url;
    }
    outcome.commits.push_back(std::move(commit));
  }
  return {};
}

}  // namespace

util::Expected<std::vector<LocalFile>> version_branch_files(
    const std::vector<UploadVariant>& variants,
    const std::optional<std::filesystem::path>& benchmarks) {
  std::vector<LocalFile> files;
  for (const auto& variant : variants) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(variant.dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file()) {
        continue;
      }
      const auto relative = it->path().lexically_relative(variant.dir);
      if (is_bytecode(relative)) {
        continue;
      }
      files.push_back(LocalFile{fmt::format("build/{}/{}", variant.name, relative.generic_string()),
                                it->path()});
    }
    if (ec) {
      return util::fail(fmt::format("cannot list \"{}\": {}", variant.dir.string(), ec.message()));
    }
  }
  if (benchmarks) {
    std::error_code ec;
    for (fs::directory_iterator it(*benchmarks, ec), end; !ec && it != end; it.increment(ec)) {
      const auto name = it->path().filename().string();
      if (it->is_regular_file() && is_benchmark_script(name)) {
        files.push_back(LocalFile{"benchmarks/" + name, it->path()});
      }
    }
  }
  std::sort(files.begin(), files.end(),
            [](const LocalFile& a, const LocalFile& b) { return a.path_in_repo < b.path_in_repo; });
  return files;
}

std::vector<std::string> stale_files(const std::vector<RemoteFile>& remote,
                                     const std::vector<LocalFile>& uploaded,
                                     const std::vector<UploadVariant>& variants,
                                     BranchState state) {
  std::set<std::string> kept;
  for (const auto& file : uploaded) {
    kept.insert(file.path_in_repo);
  }
  std::vector<std::string> stale;
  for (const auto& file : remote) {
    if (kept.contains(file.path)) {
      continue;
    }
    const std::string_view path = file.path;
    bool delete_it = false;
    if (state == BranchState::created) {
      delete_it = path.starts_with("build/") || path.starts_with("benchmarks/");
    } else {
      const auto in_benchmarks = path.starts_with("benchmarks/") &&
                                 path.find('/', 11) == std::string_view::npos &&
                                 is_benchmark_script(path.substr(11));
      const auto in_variant = std::any_of(variants.begin(), variants.end(), [path](const UploadVariant& v) {
        return path.starts_with("build/" + v.name + "/");
      });
      delete_it = in_benchmarks || in_variant;
    }
    if (delete_it) {
      stale.push_back(file.path);
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

util::Expected<bool> unchanged(const LocalFile& local, const RemoteFile& remote) {
  if (remote.sha256) {
    return KH_TRY(sha256_of_file(local.source)) == *remote.sha256;
  }
  return KH_TRY(git_blob_sha1_of_file(local.source)) == remote.oid;
}

std::string_view upload_status_name(KernelUploadOutcome::Status status) {
  switch (status) {
    case KernelUploadOutcome::Status::no_changes: return "no_changes";
    case KernelUploadOutcome::Status::uploaded: return "uploaded";
    case KernelUploadOutcome::Status::pull_request_created: return "pull_request_created";
  }
  return "uploaded";
}

std::string batch_message(std::string_view message, std::size_t index, std::size_t count) {
  if (count <= 1) {
    return std::string(message);
  }
  return fmt::format("{} (batch {}/{})", message, index + 1, count);
}

UploadDescription describe_upload(std::string_view kernel, std::optional<std::uint64_t> version,
                                  std::string_view branch,
                                  const std::vector<std::string>& variants) {
  std::string what = version ? fmt::format("{} version {}", kernel, *version)
                             : fmt::format("{} to {}", kernel, branch);
  if (version && branch != fmt::format("v{}", *version)) {
    what += fmt::format(" to {}", branch);
  }
  UploadDescription out;
  out.title = fmt::format("Upload {}: {}", what, fmt::join(variants, ", "));
  if (out.title.size() > k_max_title) {
    out.title = fmt::format("Upload {}: {} variants", what, variants.size());
  }
  if (out.title.size() > k_max_title) {
    out.title.resize(k_max_title);
  }
  out.card_title = version ? fmt::format("Update the card of {} (version {})", kernel, *version)
                           : fmt::format("Update the card of {} ({})", kernel, branch);
  if (out.card_title.size() > k_max_title) {
    out.card_title.resize(k_max_title);
  }
  out.description = fmt::format("{} build variant(s):\n", variants.size());
  for (const auto& name : variants) {
    out.description += fmt::format("- `{}`\n", name);
  }
  out.description += "\nUploaded using `kernel-builder`.";
  return out;
}

HubResult<KernelUploadOutcome> upload_kernel(const HubClient& client,
                                             const KernelUploadRequest& request) {
  KernelUploadOutcome outcome;
  if (request.create_pr == CreatePr::no) {
    auto url = client.create_repo(request.repo, request.visibility, ExistOk::yes);
    if (!url) {
      auto error = url.error();
      if (error.status == 403) {
        error.message = fmt::format("cannot create repository {}: {}", request.repo.id.str(), error.message);
      }
      return tl::unexpected(std::move(error));
    }
    outcome.repo_url = *url;
  }
  auto refs = KH_HUB_TRY(client.list_refs(request.repo));
  BranchState state = BranchState::existing;
  if (!branch_head(refs, request.branch)) {
    if (request.create_pr == CreatePr::yes) {
      return hub_fail(ErrorKind::revision_not_found,
                      fmt::format("pull requests can only target an existing branch; ask a "
                                  "maintainer of `{}` to create the branch `{}` first",
                                  request.repo.id.str(), request.branch));
    }
    auto created = client.create_branch(request.repo, request.branch, std::nullopt, ExistOk::yes);
    if (!created) {
      return tl::unexpected(created.error());
    }
    state = BranchState::created;
    log_line(request, fmt::format("Using branch `{}` (new)", request.branch));
    refs = KH_HUB_TRY(client.list_refs(request.repo));
  } else {
    log_line(request, fmt::format("Using branch `{}`", request.branch));
  }

  std::vector<BranchPlan> plans;
  if (request.card && request.branch != "main") {
    const auto main_files = KH_HUB_TRY(remote_files(client, request.repo, "main"));
    const std::vector<LocalFile> readme{{"README.md", *request.card}};
    BranchPlan main{"main", branch_head(refs, "main"),
                    KH_HUB_TRY(additions(client, request, "main", readme, main_files))};
    plans.push_back(std::move(main));
  }
  const auto files = version_branch_files(request.variants, request.benchmarks);
  if (!files) {
    return hub_fail(ErrorKind::io, files.error().message);
  }
  std::vector<LocalFile> branch_files = *files;
  if (request.card) {
    // The version branch gets this version's card too (issue 13 item 6): created from main,
    // it would otherwise keep the card of the version main had then, or none.
    branch_files.push_back(LocalFile{"README.md", *request.card});
  }
  const auto remote = KH_HUB_TRY(remote_files(client, request.repo, request.branch));
  BranchPlan version{request.branch, branch_head(refs, request.branch),
                     KH_HUB_TRY(additions(client, request, request.branch, branch_files, remote))};
  for (const auto& path : stale_files(remote, *files, request.variants, state)) {
    version.operations.push_back(CommitOperation{CommitOperation::Kind::delete_file, path, std::nullopt, {}});
  }
  plans.push_back(std::move(version));

  for (const auto& plan : plans) {
    if (plan.operations.empty()) {
      continue;
    }
    auto committed = commit_in_batches(client, request, plan, outcome);
    if (!committed) {
      return tl::unexpected(committed.error());
    }
  }
  if (!outcome.commits.empty()) {
    outcome.status = request.create_pr == CreatePr::yes ? KernelUploadOutcome::Status::pull_request_created
                                                         : KernelUploadOutcome::Status::uploaded;
  }
  return outcome;
}

}  // namespace kernelhub::hub
