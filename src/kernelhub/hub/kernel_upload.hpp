// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/hub/hub_client.hpp>

// `kernel-builder upload` (builder.md §8): the card as README.md on `main` and on the version
// branch (the reference leaves a new branch with main's card of the time), the variants and
// benchmarks on the version branch, with the reference's stale-file rules. The planning steps
// are pure functions over file lists so they can be tested without a server.
namespace kernelhub::hub {

struct UploadVariant {
  std::string name;              // "torch-cpu"
  std::filesystem::path dir;     // build/torch-cpu
};

struct KernelUploadRequest {
  KernelUploadRequest(RepoRef repo_ref, std::string branch_name, std::vector<UploadVariant> kernel_variants)
      : repo(std::move(repo_ref)), branch(std::move(branch_name)), variants(std::move(kernel_variants)) {}

  RepoRef repo;
  std::string branch;                       // "v1"
  std::vector<UploadVariant> variants;
  std::optional<std::filesystem::path> card;       // <variants dir>/CARD.md when it exists
  std::optional<std::filesystem::path> benchmarks; // <kernel dir>/benchmarks when it exists
  Visibility visibility = Visibility::public_repo;
  CreatePr create_pr = CreatePr::no;
  // What the commits say (describe_upload gives the defaults). `commit_message` names the
  // version branch's commits, `card_message` main's card commit. With create_pr the commit
  // that opens a pull request is named by `pr_title` and described by `pr_description`, since
  // the Hub names a pull request after the commit that opens it and shows that commit's
  // description as its opening comment (huggingface_hub's create_commit: "If create_pr is
  // True, ... commit_description ... is the PR description"); empty ones fall back to the
  // commit's.
  std::string commit_message = "Uploaded using `kernel-builder`.";
  std::string commit_description;
  std::string card_message = "Uploaded using `kernel-builder`.";
  std::string pr_title;
  std::string pr_description;
  // Progress lines ("Using branch `v1` (new)"); nothing is printed by the library itself.
  std::function<void(const std::string&)> log;
};

// A file to put in the repo.
struct LocalFile {
  std::string path_in_repo;
  std::filesystem::path source;
};

// A remote file (from the tree) with the id its bytes are named by.
struct RemoteFile {
  std::string path;
  std::string oid;                    // git blob sha1 (of the pointer, for LFS files)
  std::optional<std::string> sha256;  // LFS files
};

enum class BranchState { existing, created };

// `build/<variant>/<relpath>` for every file of each variant (forward slashes), then
// `benchmarks/benchmark*.py` (top level only), sorted by path.
util::Expected<std::vector<LocalFile>> version_branch_files(
    const std::vector<UploadVariant>& variants,
    const std::optional<std::filesystem::path>& benchmarks);

// The remote files to delete on the version branch (builder.md §8 step 8): on a created
// branch (which inherits main's tree) every `build/` and `benchmarks/` file not uploaded; on
// an existing one only stale files under the uploaded variants' folders and stale
// `benchmarks/benchmark*.py`.
std::vector<std::string> stale_files(const std::vector<RemoteFile>& remote,
                                     const std::vector<LocalFile>& uploaded,
                                     const std::vector<UploadVariant>& variants,
                                     BranchState state);

// Whether the local file already has these bytes on the remote side.
util::Expected<bool> unchanged(const LocalFile& local, const RemoteFile& remote);

struct BranchCommit {
  std::string branch;
  std::string commit_oid;
  std::string commit_url;
  std::optional<std::string> pull_request_url;
};

struct KernelUploadOutcome {
  enum class Status { no_changes, uploaded, pull_request_created };
  Status status = Status::no_changes;
  std::string repo_url;
  std::vector<BranchCommit> commits;
};

std::string_view upload_status_name(KernelUploadOutcome::Status status);

// The summary of batch `index` of `count`: `message` alone, else "<message> (batch i/n)".
std::string batch_message(std::string_view message, std::size_t index, std::size_t count);

// The default title and description of an upload: what was uploaded (kernel, version,
// variants) rather than the tool's name, so a reviewer sees it in the pull request list.
struct UploadDescription {
  std::string title;        // "Upload relu version 1: torch-cpu, torch29-cxx11-cu128-x86_64-linux"
  std::string card_title;   // "Update the card of relu (version 1)"
  std::string description;  // the variants, one a line, and the tool
};
// Titles stay within k_max_title (the Hub's, and our server's, limit on a discussion title):
// the variant names are listed when they fit, else counted (the description lists them all).
// `branch` is named when it is not `v<version>`.
inline constexpr std::size_t k_max_title = 200;
UploadDescription describe_upload(std::string_view kernel, std::optional<std::uint64_t> version,
                                  std::string_view branch,
                                  const std::vector<std::string>& variants);

inline constexpr std::size_t k_operations_per_commit = 1000;

HubResult<KernelUploadOutcome> upload_kernel(const HubClient& client,
                                             const KernelUploadRequest& request);

}  // namespace kernelhub::hub
