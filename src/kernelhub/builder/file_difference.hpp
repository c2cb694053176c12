// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

// Where two build variants differ, for `kernel-builder verify-build`: the first file (in path
// order) that one lacks or whose bytes differ, with a hint of where inside it they part.
namespace kernelhub::builder {

struct FileDifference {
  std::string path;  // variant-relative, '/'-separated
  // "only in the published variant", "ELF section .text differs (offset 0x1040)",
  // "line 3: published \"x = 1\", rebuilt \"x = 2\"", "byte 812 differs", ...
  std::string hint;

  friend bool operator==(const FileDifference&, const FileDifference&) = default;
};

// The regular files of a variant (links to files followed, as the Hub's snapshots are links
// into the blob store), sorted, '/'-separated: all but bytecode (`__pycache__/`, `*.pyc`) and
// the top-level `metadata.json.sigstore`, which a signer adds after the build.
util::Expected<std::vector<std::string>> variant_file_list(const std::filesystem::path& variant);

// Where `published` and `rebuilt`, the bytes of one file, first differ: for ELF files the
// first section (in section header order) whose name, size or contents differ, else "ELF
// headers differ"; for text (no NUL byte in either) the first differing line, both quoted;
// else the first differing byte. Nullopt when the bytes are equal.
std::optional<std::string> describe_difference(std::string_view published,
                                               std::string_view rebuilt);

// The first difference between two variant folders, nullopt when they hold the same files
// with the same bytes.
util::Expected<std::optional<FileDifference>> first_difference(
    const std::filesystem::path& published, const std::filesystem::path& rebuilt);

}  // namespace kernelhub::builder
