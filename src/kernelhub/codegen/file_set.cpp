// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/file_set.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::codegen {

namespace fs = std::filesystem;

namespace {

util::Expected<void> check_relative_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') {
    return util::fail(fmt::format("invalid generated path \"{}\"", path));
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const auto component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") {
      return util::fail(fmt::format("invalid generated path \"{}\"", path));
    }
    start = end + 1;
  }
  return {};
}

bool is_inside(std::string_view path, std::string_view folder) {
  return path.size() > folder.size() && path.starts_with(folder) && path[folder.size()] == '/';
}

std::string quoted_list(const std::vector<std::string>& paths) {
  std::string text;
  for (const auto& path : paths) {
    text += (text.empty() ? "" : ", ") + fmt::format("\"{}\"", path);
  }
  return text;
}

// Every check that can refuse the write, made before the first byte is written.
util::Expected<void> check_targets(const FileSet& files, const fs::path& dir, Overwrite overwrite) {
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_directory(dir, error)) {
    return util::fail(fmt::format("\"{}\" exists and is not a directory", dir.string()));
  }
  std::vector<std::string> existing;
  for (const auto& file : files.files()) {
    // Parents may be folders or links to folders; anything else blocks the write.
    for (auto parent = fs::path(file.path).parent_path(); !parent.empty();
         parent = parent.parent_path()) {
      const auto status = fs::status(dir / parent, error);
      if (fs::exists(status) && !fs::is_directory(status)) {
        return util::fail(fmt::format("cannot write \"{}\": \"{}\" exists and is not a directory",
                                      file.path, parent.generic_string()));
      }
    }
    const auto status = fs::symlink_status(dir / file.path, error);
    if (!fs::exists(status)) {
      continue;
    }
    if (overwrite == Overwrite::no) {
      existing.push_back(file.path);
    } else if (fs::is_directory(status)) {
      return util::fail(fmt::format("cannot overwrite \"{}\": it is a directory", file.path));
    }
  }
  if (!existing.empty()) {
    return util::fail(fmt::format("refusing to overwrite {} existing file{} in \"{}\": {}",
                                  existing.size(), existing.size() == 1 ? "" : "s", dir.string(),
                                  quoted_list(existing)));
  }
  return {};
}

util::Expected<void> make_executable(const fs::path& path) {
  std::error_code error;
  const auto perms = fs::status(path, error).permissions();
  // Execute wherever read is allowed, so the umask applied at creation still rules.
  auto add = fs::perms::none;
  if ((perms & fs::perms::owner_read) != fs::perms::none) {
    add |= fs::perms::owner_exec;
  }
  if ((perms & fs::perms::group_read) != fs::perms::none) {
    add |= fs::perms::group_exec;
  }
  if ((perms & fs::perms::others_read) != fs::perms::none) {
    add |= fs::perms::others_exec;
  }
  fs::permissions(path, add, fs::perm_options::add, error);
  if (error) {
    return util::fail(fmt::format("cannot make \"{}\" executable: {}", path.string(), error.message()));
  }
  return {};
}

// Whether `target` already holds `file` (content, and the execute bit when wanted). Such a
// file is left alone, so its mtime stays and ninja and CMake see nothing to redo.
bool already_written(const fs::path& target, const GeneratedFile& file) {
  std::error_code error;
  const auto status = fs::symlink_status(target, error);
  if (!fs::is_regular_file(status) || fs::file_size(target, error) != file.content.size() ||
      error) {
    return false;
  }
  if (file.executable == Executable::yes &&
      (status.permissions() & fs::perms::owner_exec) == fs::perms::none) {
    return false;
  }
  const auto current = util::read_file(target);
  return current && *current == file.content;
}

}  // namespace

util::Expected<void> FileSet::add(std::string path, std::string content, Executable executable) {
  if (auto valid = check_relative_path(path); !valid) {
    return valid;
  }
  for (const auto& file : m_files) {
    if (file.path == path) {
      return util::fail(fmt::format("generated path \"{}\" is produced twice", path));
    }
    if (is_inside(file.path, path) || is_inside(path, file.path)) {
      return util::fail(fmt::format("generated paths \"{}\" and \"{}\" conflict", file.path, path));
    }
  }
  const auto position = std::lower_bound(
      m_files.begin(), m_files.end(), path,
      [](const GeneratedFile& file, const std::string& key) { return file.path < key; });
  m_files.insert(position, GeneratedFile{std::move(path), std::move(content), executable});
  return {};
}

const GeneratedFile* FileSet::find(std::string_view path) const {
  const auto it = std::find_if(m_files.begin(), m_files.end(),
                               [path](const GeneratedFile& file) { return file.path == path; });
  return it == m_files.end() ? nullptr : &*it;
}

std::vector<std::string> existing_paths(const FileSet& files, const fs::path& dir) {
  std::vector<std::string> existing;
  for (const auto& file : files.files()) {
    std::error_code error;
    if (fs::exists(fs::symlink_status(dir / file.path, error))) {
      existing.push_back(file.path);
    }
  }
  return existing;
}

util::Expected<void> write_file_set(const FileSet& files, const fs::path& dir, Overwrite overwrite) {
  if (auto checked = check_targets(files, dir, overwrite); !checked) {
    return checked;
  }
  for (const auto& file : files.files()) {
    const auto target = dir / file.path;
    if (already_written(target, file)) {
      continue;
    }
    std::error_code error;
    fs::create_directories(target.parent_path(), error);
    if (error) {
      return util::fail(fmt::format("cannot create directory \"{}\": {}",
                                    target.parent_path().string(), error.message()));
    }
    if (auto written = util::write_file_atomic(target, file.content); !written) {
      return written;
    }
    if (file.executable == Executable::yes) {
      if (auto made = make_executable(target); !made) {
        return made;
      }
    }
  }
  return {};
}

}  // namespace kernelhub::codegen
