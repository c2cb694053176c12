// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_store.hpp>

#include <algorithm>
#include <atomic>
#include <random>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace fs = std::filesystem;

namespace {

// Enough idle handles for the Python client's eight download threads plus a few writers.
constexpr std::size_t k_max_idle_handles = 16;
// A new repository's first commit: the Git LFS rules huggingface.co writes into every new
// repository (the usual weight, archive and array formats), so a file matching them goes
// through LFS here as it would there, and kernels.lock hashes (lfs.oid for LFS files) agree.
// Binary and large files go through LFS whatever this says (lfs_policy.hpp).
constexpr std::string_view k_first_gitattributes =
    "*.7z filter=lfs diff=lfs merge=lfs -text\n"
    "*.arrow filter=lfs diff=lfs merge=lfs -text\n"
    "*.bin filter=lfs diff=lfs merge=lfs -text\n"
    "*.bz2 filter=lfs diff=lfs merge=lfs -text\n"
    "*.ckpt filter=lfs diff=lfs merge=lfs -text\n"
    "*.ftz filter=lfs diff=lfs merge=lfs -text\n"
    "*.gz filter=lfs diff=lfs merge=lfs -text\n"
    "*.h5 filter=lfs diff=lfs merge=lfs -text\n"
    "*.joblib filter=lfs diff=lfs merge=lfs -text\n"
    "*.lfs.* filter=lfs diff=lfs merge=lfs -text\n"
    "*.mlmodel filter=lfs diff=lfs merge=lfs -text\n"
    "*.model filter=lfs diff=lfs merge=lfs -text\n"
    "*.msgpack filter=lfs diff=lfs merge=lfs -text\n"
    "*.npy filter=lfs diff=lfs merge=lfs -text\n"
    "*.npz filter=lfs diff=lfs merge=lfs -text\n"
    "*.onnx filter=lfs diff=lfs merge=lfs -text\n"
    "*.ot filter=lfs diff=lfs merge=lfs -text\n"
    "*.parquet filter=lfs diff=lfs merge=lfs -text\n"
    "*.pb filter=lfs diff=lfs merge=lfs -text\n"
    "*.pickle filter=lfs diff=lfs merge=lfs -text\n"
    "*.pkl filter=lfs diff=lfs merge=lfs -text\n"
    "*.pt filter=lfs diff=lfs merge=lfs -text\n"
    "*.pth filter=lfs diff=lfs merge=lfs -text\n"
    "*.rar filter=lfs diff=lfs merge=lfs -text\n"
    "*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
    "saved_model/**/* filter=lfs diff=lfs merge=lfs -text\n"
    "*.tar.* filter=lfs diff=lfs merge=lfs -text\n"
    "*.tar filter=lfs diff=lfs merge=lfs -text\n"
    "*.tflite filter=lfs diff=lfs merge=lfs -text\n"
    "*.tgz filter=lfs diff=lfs merge=lfs -text\n"
    "*.wasm filter=lfs diff=lfs merge=lfs -text\n"
    "*.xz filter=lfs diff=lfs merge=lfs -text\n"
    "*.zip filter=lfs diff=lfs merge=lfs -text\n"
    "*.zst filter=lfs diff=lfs merge=lfs -text\n"
    "*tfevents* filter=lfs diff=lfs merge=lfs -text\n";

bool read_private_flag(git_repository* repo) {
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo) != 0) {
    return false;
  }
  const git::Config config(raw);
  int value = 0;
  return git_config_get_bool(&value, config.get(), git::k_private_key) == 0 && value != 0;
}

HubExpected<void> write_first_commit(git_repository* repo) {
  git_oid blob_id;
  if (git_blob_create_from_buffer(&blob_id, repo, k_first_gitattributes.data(),
                                  k_first_gitattributes.size()) != 0) {
    return git_failure("write .gitattributes");
  }
  git_treebuilder* raw_builder = nullptr;
  if (git_treebuilder_new(&raw_builder, repo, nullptr) != 0) {
    return git_failure("build the first tree");
  }
  const git::TreeBuilder builder(raw_builder);
  git_oid tree_id;
  if (git_treebuilder_insert(nullptr, builder.get(), ".gitattributes", &blob_id,
                             GIT_FILEMODE_BLOB) != 0 ||
      git_treebuilder_write(&tree_id, builder.get()) != 0) {
    return git_failure("build the first tree");
  }
  git_tree* raw_tree = nullptr;
  git_signature* raw_signature = nullptr;
  if (git_tree_lookup(&raw_tree, repo, &tree_id) != 0 ||
      git_signature_now(&raw_signature, "kernelhub", "kernelhub@localhost") != 0) {
    return git_failure("prepare the first commit");
  }
  const git::Tree tree(raw_tree);
  const git::Signature signature(raw_signature);
  git_oid commit_id;
  if (git_commit_create(&commit_id, repo, "refs/heads/main", signature.get(), signature.get(),
                        nullptr, "initial commit\n", tree.get(), 0, nullptr) != 0) {
    return git_failure("write the first commit");
  }
  return {};
}

// A pool's key: the repository's type, namespace and name (short enough to need no
// allocation for most), not its folder's path, which each request would build again.
std::string pool_key(const RepoId& id) {
  const std::string_view type = api_part(id.type);
  std::string key;
  key.reserve(type.size() + id.ns.size() + id.name.size() + 2);
  key.append(type).append("/").append(id.ns).append("/").append(id.name);
  return key;
}

}  // namespace

struct RepositoryStore::Pool {
  fs::path directory;
  bool is_private = false;
  std::mutex mutex;
  std::vector<git_repository*> idle;

  ~Pool() {
    for (git_repository* repo : idle) {
      git_repository_free(repo);
    }
  }
};

RepositoryStore::RepositoryStore(fs::path root) : m_root(std::move(root)) {
  git_libgit2_init();
  // Small blobs stay in each handle's object cache, so resolving a hot file reads no disk.
  git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_BLOB, std::size_t{256} << 10);
  // Objects and refs reach the disk before a commit is acknowledged.
  git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
}

RepositoryStore::~RepositoryStore() {
  m_pools.clear();
  git_libgit2_shutdown();
}

fs::path RepositoryStore::directory(const RepoId& id) const {
  return m_root / std::string(api_part(id.type)) / id.ns / (id.name + ".git");
}

std::shared_ptr<RepositoryStore::Pool> RepositoryStore::pool_for(const RepoId& id) {
  const std::string key = pool_key(id);
  std::lock_guard lock(m_mutex);
  auto it = m_pools.find(key);
  if (it != m_pools.end()) {
    return it->second;
  }
  const fs::path dir = directory(id);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return nullptr;
  }
  auto pool = std::make_shared<Pool>();
  pool->directory = dir;
  git_repository* repo = nullptr;
  if (git_repository_open_bare(&repo, dir.c_str()) != 0) {
    return nullptr;
  }
  pool->is_private = read_private_flag(repo);
  pool->idle.push_back(repo);
  m_pools.emplace(key, pool);
  return pool;
}

HubExpected<OpenRepository> RepositoryStore::open(const RepoId& id) {
  std::shared_ptr<Pool> pool = pool_for(id);
  if (!pool) {
    return repo_not_found(id.id());
  }
  git_repository* repo = nullptr;
  {
    std::lock_guard lock(pool->mutex);
    if (!pool->idle.empty()) {
      repo = pool->idle.back();
      pool->idle.pop_back();
    }
  }
  if (repo == nullptr && git_repository_open_bare(&repo, pool->directory.c_str()) != 0) {
    return git_failure(fmt::format("open repository \"{}\"", id.id()));
  }
  // The deleter hands the handle back to its pool, or frees it when the pool is full.
  std::shared_ptr<git_repository> handle(repo, [pool](git_repository* returned) {
    std::lock_guard lock(pool->mutex);
    if (pool->idle.size() < k_max_idle_handles) {
      pool->idle.push_back(returned);
    } else {
      git_repository_free(returned);
    }
  });
  return OpenRepository{std::move(handle), pool->is_private};
}

HubExpected<bool> RepositoryStore::create(const RepoId& id, bool is_private) {
  const fs::path final_dir = directory(id);
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    return false;
  }
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) {
    return hub_fail(500, "", fmt::format("cannot create \"{}\": {}",
                                         final_dir.parent_path().string(), ec.message()));
  }
  // A name starting with '.' is never a valid repo id, so listings skip half-made ones.
  const fs::path temp_dir =
      final_dir.parent_path() / fmt::format(".tmp-{}-{}", id.name, git::unique_suffix());
  git_repository_init_options options = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  options.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
  options.initial_head = "main";
  git_repository* raw = nullptr;
  if (git_repository_init_ext(&raw, temp_dir.c_str(), &options) != 0) {
    return git_failure(fmt::format("create repository \"{}\"", id.id()));
  }
  std::unique_ptr<git_repository, decltype(&git_repository_free)> repo(raw,
                                                                       &git_repository_free);
  auto cleanup = [&] {
    repo.reset();
    fs::remove_all(temp_dir, ec);
  };
  if (auto first = write_first_commit(repo.get()); !first) {
    cleanup();
    return tl::unexpected(first.error());
  }
  if (is_private) {
    git_config* raw_config = nullptr;
    if (git_repository_config(&raw_config, repo.get()) == 0) {
      const git::Config config(raw_config);
      git_config_set_bool(config.get(), git::k_private_key, 1);
    }
  }
  repo.reset();
  fs::rename(temp_dir, final_dir, ec);
  if (ec) {
    // Another request created it first (rename onto a non-empty folder fails).
    fs::remove_all(temp_dir, ec);
    return false;
  }
  return true;
}

void RepositoryStore::forget(const RepoId& id) {
  std::lock_guard lock(m_mutex);
  m_pools.erase(pool_key(id));
}

std::mutex& RepositoryStore::write_mutex(const RepoId& id) {
  std::lock_guard lock(m_mutex);
  auto& slot = m_write_mutexes[directory(id).string()];
  if (!slot) {
    slot = std::make_unique<std::mutex>();
  }
  return *slot;
}

std::vector<RepoId> RepositoryStore::list(RepoType type) const {
  std::vector<RepoId> ids;
  std::error_code ec;
  const fs::path type_dir = m_root / std::string(api_part(type));
  for (fs::directory_iterator ns_it(type_dir, ec), end; !ec && ns_it != end;
       ns_it.increment(ec)) {
    const std::string ns = ns_it->path().filename().string();
    if (!is_valid_id_part(ns)) {
      continue;
    }
    std::error_code inner;
    for (fs::directory_iterator it(ns_it->path(), inner), inner_end; !inner && it != inner_end;
         it.increment(inner)) {
      const std::string file = it->path().filename().string();
      if (!file.ends_with(".git")) {
        continue;
      }
      const std::string name = file.substr(0, file.size() - 4);
      if (is_valid_id_part(name)) {
        ids.push_back(RepoId{type, ns, name});
      }
    }
  }
  std::sort(ids.begin(), ids.end(),
            [](const RepoId& a, const RepoId& b) { return a.id() < b.id(); });
  return ids;
}

RepositoryStore::Leftovers RepositoryStore::remove_leftovers() const {
  Leftovers removed;
  const auto remove = [&removed](const fs::path& path) {
    std::error_code ec;
    std::uintmax_t bytes = 0;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code size_ec;
      if (it->is_regular_file(size_ec)) {
        bytes += it->file_size(size_ec);
      }
    }
    if (fs::is_regular_file(path, ec)) {
      bytes = fs::file_size(path, ec);
    }
    if (fs::remove_all(path, ec) != static_cast<std::uintmax_t>(-1) && !ec) {
      ++removed.count;
      removed.bytes += bytes;
    }
  };
  for (const RepoType type : {RepoType::model, RepoType::dataset, RepoType::kernel}) {
    std::error_code ec;
    const fs::path type_dir = m_root / std::string(api_part(type));
    for (fs::directory_iterator ns_it(type_dir, ec), end; !ec && ns_it != end;
         ns_it.increment(ec)) {
      std::error_code inner;
      std::vector<fs::path> doomed;
      for (fs::directory_iterator it(ns_it->path(), inner), inner_end;
           !inner && it != inner_end; it.increment(inner)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with(".tmp-")) {
          doomed.push_back(it->path());
          continue;
        }
        if (!name.ends_with(".git")) {
          continue;
        }
        // libgit2 writes a loose object as objects/tmp_object_git2_XXXXXX, then renames it.
        std::error_code objects_ec;
        for (fs::directory_iterator object(it->path() / "objects", objects_ec), objects_end;
             !objects_ec && object != objects_end; object.increment(objects_ec)) {
          if (object->path().filename().string().starts_with("tmp_object_git2_")) {
            doomed.push_back(object->path());
          }
        }
      }
      // Removed after the walk: removing while iterating a folder is unspecified.
      for (const auto& path : doomed) {
        remove(path);
      }
    }
  }
  return removed;
}

}  // namespace kernelhub::server
