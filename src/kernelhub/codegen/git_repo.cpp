// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/git_repo.hpp>

#include <memory>

#include <fmt/format.h>
#include <git2.h>

namespace kernelhub::codegen {

namespace {

// libgit2 keeps global state that must be set up around every use.
class LibGit2Session {
 public:
  LibGit2Session() { git_libgit2_init(); }
  ~LibGit2Session() { git_libgit2_shutdown(); }
  LibGit2Session(const LibGit2Session&) = delete;
  LibGit2Session& operator=(const LibGit2Session&) = delete;
};

struct RepositoryDeleter {
  void operator()(git_repository* repository) const { git_repository_free(repository); }
};
struct IndexDeleter {
  void operator()(git_index* index) const { git_index_free(index); }
};

tl::unexpected<util::Error> git_failure(std::string_view what, const std::filesystem::path& dir) {
  const git_error* error = git_error_last();
  return util::fail(fmt::format("cannot {} in \"{}\": {}", what, dir.string(),
                                error != nullptr ? error->message : "unknown libgit2 error"));
}

}  // namespace

util::Expected<void> init_repository_and_stage_all(const std::filesystem::path& dir) {
  const LibGit2Session session;
  git_repository* raw_repository = nullptr;
  if (git_repository_init(&raw_repository, dir.c_str(), /*is_bare=*/0) != 0) {
    return git_failure("initialize a git repository", dir);
  }
  const std::unique_ptr<git_repository, RepositoryDeleter> repository(raw_repository);
  git_index* raw_index = nullptr;
  if (git_repository_index(&raw_index, repository.get()) != 0) {
    return git_failure("open the git index", dir);
  }
  const std::unique_ptr<git_index, IndexDeleter> index(raw_index);
  // An empty pathspec matches every file; ignored files are skipped by default.
  git_strarray everything = {nullptr, 0};
  if (git_index_add_all(index.get(), &everything, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr) != 0) {
    return git_failure("stage the project's files", dir);
  }
  if (git_index_write(index.get()) != 0) {
    return git_failure("write the git index", dir);
  }
  return {};
}

}  // namespace kernelhub::codegen
