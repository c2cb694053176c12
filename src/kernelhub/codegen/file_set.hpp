// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

// Generated files are built in memory by pure functions, then written in one step, so a
// refusal or a bad template leaves the target directory untouched (the reference's FileSet).
namespace kernelhub::codegen {

enum class Executable { no, yes };

struct GeneratedFile {
  std::string path;  // relative, '/'-separated, no "." or ".." components
  std::string content;
  Executable executable = Executable::no;
};

class FileSet {
 public:
  // Fails on an empty, absolute or escaping path, and on a path added twice or one that is
  // both a file and a folder of another file.
  util::Expected<void> add(std::string path, std::string content,
                           Executable executable = Executable::no);

  // Files sorted by path.
  const std::vector<GeneratedFile>& files() const { return m_files; }
  const GeneratedFile* find(std::string_view path) const;
  bool empty() const { return m_files.empty(); }

 private:
  std::vector<GeneratedFile> m_files;
};

enum class Overwrite { no, yes };

// The set's paths that already exist under `dir` (as anything: file, folder or link).
std::vector<std::string> existing_paths(const FileSet& files, const std::filesystem::path& dir);

// Writes every file under `dir` (created as needed) with util::write_file_atomic.
//
// Before writing anything it checks every target: with Overwrite::no any existing target is
// a refusal; with Overwrite::yes a target may exist only as a regular file (replaced), and in
// both modes each parent must be a folder or absent. A refusal writes nothing. Files under
// `dir` that are not in the set are never touched, nor are targets that already hold exactly
// their content (their mtime stays, so an unchanged generated project rebuilds nothing).
util::Expected<void> write_file_set(const FileSet& files, const std::filesystem::path& dir,
                                    Overwrite overwrite);

}  // namespace kernelhub::codegen
