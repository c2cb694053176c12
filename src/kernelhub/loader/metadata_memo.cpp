// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/metadata_memo.hpp>

#include <map>
#include <mutex>
#include <system_error>

#include <kernelhub/loader/blob_verify.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

struct Memo {
  std::mutex mutex;
  std::map<std::string, metadata::Metadata, std::less<>> by_blob;
};

Memo& memo() {
  static Memo instance;
  return instance;
}

}  // namespace

std::optional<std::string> content_key(const fs::path& metadata_file) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(metadata_file, ec);
  if (ec || target.parent_path().filename() != "blobs") {
    return std::nullopt;
  }
  std::string blob = target.filename().string();
  if (!is_content_hash(blob)) {
    return std::nullopt;
  }
  return blob;
}

std::optional<metadata::Metadata> remembered_metadata(const std::string& key) {
  auto& state = memo();
  const std::lock_guard lock(state.mutex);
  if (const auto found = state.by_blob.find(key); found != state.by_blob.end()) {
    return found->second;
  }
  return std::nullopt;
}

void remember_metadata(const std::string& key, const metadata::Metadata& parsed) {
  auto& state = memo();
  const std::lock_guard lock(state.mutex);
  state.by_blob.emplace(key, parsed);
}

}  // namespace kernelhub::loader
