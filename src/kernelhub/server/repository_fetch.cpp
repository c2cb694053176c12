// SPDX-License-Identifier: Apache-2.0
// libgit2's fetch, taken apart so that nothing half-fetched is ever visible: connect and list
// the upstream's refs, download the pack of what is missing (git_remote_download writes objects
// and no refs), check that every advertised object is now stored, then move the refs in one
// git_transaction. git_remote_fetch would update the tips itself, one ref at a time.
#include <kernelhub/server/repository_fetch.hpp>

#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_mirror_key = "kernelhub.mirror";

// libgit2 counts its initialisations: each entry point holds one, so these functions work
// with or without a RepositoryStore alive.
struct Libgit2 {
  Libgit2() { git_libgit2_init(); }
  ~Libgit2() { git_libgit2_shutdown(); }
  Libgit2(const Libgit2&) = delete;
  Libgit2& operator=(const Libgit2&) = delete;
};

using Repository = git::Owned<git_repository, git_repository_free>;
using Remote = git::Owned<git_remote, git_remote_free>;
using Transaction = git::Owned<git_transaction, git_transaction_free>;

tl::unexpected<util::Error> git_failed(std::string_view what) {
  return util::fail(fmt::format("cannot {}: {}", what, git::last_error()));
}

// The refs a mirror keeps: branches, tags (not their peeled `^{}` lines) and pull requests.
bool is_mirrored_ref(std::string_view name) {
  return (name.starts_with("refs/heads/") || name.starts_with("refs/tags/") ||
          name.starts_with("refs/pr/")) &&
         !name.ends_with("^{}");
}

util::Expected<Repository> open_bare(const fs::path& dir) {
  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, dir.c_str()) != 0) {
    return git_failed(fmt::format("open repository \"{}\"", dir.string()));
  }
  return Repository(raw);
}

// The mirrored refs the repository holds now.
util::Expected<std::map<std::string, git_oid>> local_refs(git_repository* repo) {
  std::map<std::string, git_oid> refs;
  git_reference_iterator* raw = nullptr;
  if (git_reference_iterator_new(&raw, repo) != 0) {
    return git_failed("list references");
  }
  const git::ReferenceIterator iterator(raw);
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, iterator.get()) == 0) {
    const git::Reference owned(ref);
    const std::string name = git_reference_name(ref);
    if (is_mirrored_ref(name) && git_reference_type(ref) == GIT_REFERENCE_DIRECT) {
      refs.emplace(name, *git_reference_target(ref));
    }
  }
  return refs;
}

util::Expected<void> set_config(const fs::path& dir, const char* key, const std::string* text,
                                std::optional<bool> flag) {
  const Repository repo = KH_TRY(open_bare(dir));
  git_config* raw = nullptr;
  if (git_repository_config(&raw, repo.get()) != 0) {
    return git_failed("open the repository's config");
  }
  const git::Config config(raw);
  const int status = text != nullptr ? git_config_set_string(config.get(), key, text->c_str())
                                     : git_config_set_bool(config.get(), key, flag.value_or(false));
  if (status != 0) {
    return git_failed(fmt::format("set {}", key));
  }
  return {};
}

}  // namespace

util::Expected<FetchSummary> fetch_into(const fs::path& dir, const UpstreamSource& source) {
  const Libgit2 libgit2;
  const Repository repo = KH_TRY(open_bare(dir));
  git_remote* raw_remote = nullptr;
  if (git_remote_create_anonymous(&raw_remote, repo.get(), source.url.c_str()) != 0) {
    return git_failed(fmt::format("use \"{}\" as a remote", source.url));
  }
  const Remote remote(raw_remote);
  std::string header = "Authorization: Bearer " + source.token;
  char* headers[] = {header.data()};
  const git_strarray custom_headers{headers, source.token.empty() ? 0u : 1u};
  const git_remote_callbacks callbacks = GIT_REMOTE_CALLBACKS_INIT;
  if (git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &callbacks, nullptr,
                         &custom_headers) != 0) {
    return git_failed(fmt::format("fetch from {}", source.url));
  }
  const git_remote_head** heads = nullptr;
  std::size_t count = 0;
  if (git_remote_ls(&heads, &count, remote.get()) != 0) {
    return git_failed(fmt::format("list the refs of {}", source.url));
  }
  std::map<std::string, git_oid> wanted;
  for (std::size_t i = 0; i < count; ++i) {
    if (is_mirrored_ref(heads[i]->name)) {
      wanted.emplace(heads[i]->name, heads[i]->oid);
    }
  }
  FetchSummary summary;
  git_buf branch = GIT_BUF_INIT;
  if (git_remote_default_branch(&branch, remote.get()) == 0) {
    summary.default_branch.assign(branch.ptr, branch.size);
  }
  git_buf_dispose(&branch);
  const char* specs[] = {"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
                         "+refs/pr/*:refs/pr/*"};
  const git_strarray refspecs{const_cast<char**>(specs), 3};
  git_fetch_options options = GIT_FETCH_OPTIONS_INIT;
  options.custom_headers = custom_headers;
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  if (git_remote_download(remote.get(), &refspecs, &options) != 0) {
    return git_failed(fmt::format("fetch from {}", source.url));
  }
  git_remote_disconnect(remote.get());

  git_odb* raw_odb = nullptr;
  if (git_repository_odb(&raw_odb, repo.get()) != 0) {
    return git_failed("open the object database");
  }
  const git::Odb odb(raw_odb);
  for (const auto& [name, oid] : wanted) {
    if (git_odb_exists(odb.get(), &oid) == 0) {
      return util::fail(fmt::format("the fetch from {} did not bring {} of {}", source.url,
                                    git::to_hex(oid), name));
    }
  }
  const auto current = KH_TRY(local_refs(repo.get()));
  git_transaction* raw_tx = nullptr;
  if (git_transaction_new(&raw_tx, repo.get()) != 0) {
    return git_failed("start a ref transaction");
  }
  const Transaction tx(raw_tx);
  for (const auto& [name, oid] : wanted) {
    const auto it = current.find(name);
    if (it != current.end() && git_oid_equal(&it->second, &oid)) {
      continue;
    }
    if (git_transaction_lock_ref(tx.get(), name.c_str()) != 0 ||
        git_transaction_set_target(tx.get(), name.c_str(), &oid, nullptr, "mirror: fetch") != 0) {
      return git_failed(fmt::format("update {}", name));
    }
    ++summary.changed;
  }
  for (const auto& [name, oid] : current) {
    if (wanted.contains(name)) {
      continue;
    }
    if (git_transaction_lock_ref(tx.get(), name.c_str()) != 0 ||
        git_transaction_remove(tx.get(), name.c_str()) != 0) {
      return git_failed(fmt::format("remove {}", name));
    }
    ++summary.changed;
  }
  if (summary.changed > 0 && git_transaction_commit(tx.get()) != 0) {
    return git_failed("move the mirrored refs");
  }
  if (!summary.default_branch.empty() && wanted.contains(summary.default_branch) &&
      git_repository_set_head(repo.get(), summary.default_branch.c_str()) != 0) {
    return git_failed(fmt::format("set HEAD to {}", summary.default_branch));
  }
  return summary;
}

util::Expected<void> init_mirror_repository(const fs::path& dir, const std::string& upstream,
                                            bool is_private) {
  const Libgit2 libgit2;
  git_repository_init_options options = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  options.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH |
                  GIT_REPOSITORY_INIT_NO_REINIT;
  options.initial_head = "main";
  git_repository* raw = nullptr;
  if (git_repository_init_ext(&raw, dir.c_str(), &options) != 0) {
    return git_failed(fmt::format("create repository \"{}\"", dir.string()));
  }
  git_repository_free(raw);
  if (auto marked = set_config(dir, k_mirror_key, &upstream, std::nullopt); !marked) {
    return marked;
  }
  return set_config(dir, git::k_private_key, nullptr, is_private);
}

std::optional<std::string> mirrored_upstream(const fs::path& dir) {
  const Libgit2 libgit2;
  auto repo = open_bare(dir);
  if (!repo) {
    return std::nullopt;
  }
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo->get()) != 0) {
    return std::nullopt;
  }
  const git::Config config(raw);
  const char* value = nullptr;
  if (git_config_get_string(&value, config.get(), k_mirror_key) != 0 || value == nullptr ||
      *value == '\0') {
    return std::nullopt;
  }
  return std::string(value);
}

util::Expected<void> set_private_flag(const fs::path& dir, bool is_private) {
  const Libgit2 libgit2;
  return set_config(dir, git::k_private_key, nullptr, is_private);
}

}  // namespace kernelhub::server
