// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/git_state.hpp>

#include <memory>

#include <fmt/format.h>

#include <git2.h>

namespace kernelhub::builder {

namespace {

// libgit2 keeps global state; one init per process is enough and never undone.
void ensure_libgit2() {
  static const int k_initialised = git_libgit2_init();
  (void)k_initialised;
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* value) const { Free(value); }
};
using Repository = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using CommitPtr = std::unique_ptr<git_commit, Deleter<git_commit, git_commit_free>>;
using StatusList = std::unique_ptr<git_status_list, Deleter<git_status_list, git_status_list_free>>;
using Remote = std::unique_ptr<git_remote, Deleter<git_remote, git_remote_free>>;

std::optional<std::string> origin_url(git_repository* repo) {
  git_remote* raw = nullptr;
  if (git_remote_lookup(&raw, repo, "origin") != 0) {
    return std::nullopt;
  }
  const Remote remote(raw);
  const char* url = git_remote_url(remote.get());
  if (url == nullptr || *url == '\0') {
    return std::nullopt;
  }
  return url_without_credentials(url);
}

std::string oid_hex(const git_oid* oid) {
  char buffer[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(buffer, sizeof buffer, oid);
  return buffer;
}

bool tracked_files_changed(git_repository* repo) {
  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;  // untracked files are not included
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo, &options) != 0) {
    return true;  // when in doubt, do not claim a clean tree
  }
  const StatusList list(raw);
  return git_status_list_entrycount(list.get()) > 0;
}

std::string last_error() {
  const git_error* error = git_error_last();
  return error != nullptr && error->message != nullptr ? error->message : "unknown libgit2 error";
}

using Object = std::unique_ptr<git_object, Deleter<git_object, git_object_free>>;

}  // namespace

std::string url_without_credentials(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return url;
  }
  const auto authority = scheme_end + 3;
  const auto authority_end = url.find_first_of("/?#", authority);
  const auto at = url.rfind('@', authority_end == std::string::npos ? url.size() : authority_end);
  if (at == std::string::npos || at < authority) {
    return url;
  }
  return url.substr(0, authority) + url.substr(at + 1);
}

std::optional<KernelGitState> read_git_state(const std::filesystem::path& dir) {
  ensure_libgit2();
  git_repository* raw_repo = nullptr;
  if (git_repository_open_ext(&raw_repo, dir.c_str(), 0, nullptr) != 0) {
    return std::nullopt;
  }
  const Repository repo(raw_repo);
  git_oid head{};
  if (git_reference_name_to_id(&head, repo.get(), "HEAD") != 0) {
    return std::nullopt;  // unborn branch: nothing committed yet
  }
  git_commit* raw_commit = nullptr;
  if (git_commit_lookup(&raw_commit, repo.get(), &head) != 0) {
    return std::nullopt;
  }
  const CommitPtr commit(raw_commit);
  auto commit_id = types::GitOid::parse(oid_hex(&head));
  if (!commit_id) {
    return std::nullopt;
  }
  KernelGitState state{oid_hex(git_commit_tree_id(commit.get())),
                       metadata::GitStatus{*commit_id, tracked_files_changed(repo.get())},
                       static_cast<std::int64_t>(git_commit_time(commit.get())),
                       origin_url(repo.get())};
  return state;
}

std::optional<std::filesystem::path> git_work_tree(const std::filesystem::path& dir) {
  ensure_libgit2();
  git_repository* raw_repo = nullptr;
  if (git_repository_open_ext(&raw_repo, dir.c_str(), 0, nullptr) != 0) {
    return std::nullopt;
  }
  const Repository repo(raw_repo);
  const char* workdir = git_repository_workdir(repo.get());
  if (workdir == nullptr) {
    return std::nullopt;  // a bare repository
  }
  return std::filesystem::path(workdir).lexically_normal();
}

util::Expected<void> clone_at_commit(const std::string& url, const std::string& commit,
                                     const std::filesystem::path& dest,
                                     const std::optional<std::string>& origin) {
  ensure_libgit2();
  git_clone_options options = GIT_CLONE_OPTIONS_INIT;
  options.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;  // the commit's tree comes next
  git_repository* raw_repo = nullptr;
  if (git_clone(&raw_repo, url.c_str(), dest.c_str(), &options) != 0) {
    return util::fail(fmt::format("cannot clone \"{}\": {}", url_without_credentials(url),
                                  last_error()));
  }
  const Repository repo(raw_repo);
  git_oid oid{};
  git_object* raw_object = nullptr;
  if (git_oid_fromstr(&oid, commit.c_str()) != 0 ||
      git_object_lookup(&raw_object, repo.get(), &oid, GIT_OBJECT_COMMIT) != 0) {
    return util::fail(fmt::format("commit {} is not in \"{}\" (was it pushed?)", commit,
                                  url_without_credentials(url)));
  }
  const Object object(raw_object);
  git_checkout_options checkout = GIT_CHECKOUT_OPTIONS_INIT;
  checkout.checkout_strategy = GIT_CHECKOUT_FORCE;
  if (git_checkout_tree(repo.get(), object.get(), &checkout) != 0 ||
      git_repository_set_head_detached(repo.get(), &oid) != 0) {
    return util::fail(fmt::format("cannot check out {} in {}: {}", commit, dest.string(),
                                  last_error()));
  }
  const int changed = origin ? git_remote_set_url(repo.get(), "origin", origin->c_str())
                             : git_remote_delete(repo.get(), "origin");
  if (changed != 0) {
    return util::fail(fmt::format("cannot set the origin of {}: {}", dest.string(), last_error()));
  }
  return {};
}

}  // namespace kernelhub::builder
