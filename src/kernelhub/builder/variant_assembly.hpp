// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/util/expected.hpp>

// Puts one build variant together (builder.md §8 layout): the kernel's Python package, the
// generated files, native modules and metadata.json with its digest. The variant is made in a
// temporary folder beside its target and renamed into place, so a failed build never leaves
// half a variant behind and a successful one replaces the old one whole.
namespace kernelhub::builder {

// A compiled file and its name in the variant (empty: the file's own name).
struct NativeFile {
  std::filesystem::path source;
  std::string name;
};

struct VariantContents {
  explicit VariantContents(metadata::Metadata meta) : metadata(std::move(meta)) {}

  metadata::Metadata metadata;        // digest is computed here
  std::filesystem::path package_dir;  // torch-ext/<python name>/ of the kernel
  // Extensions copied besides "py" ([torch] / [torch-noarch] pyext); ignored with
  // Copy::all_files.
  std::vector<std::string> data_extensions;
  enum class Copy { python_and_data, all_files } copy = Copy::python_and_data;
  codegen::FileSet generated;                      // e.g. _ops.py; replaces package files
  std::vector<NativeFile> native_files;  // copied to the variant's top level
};

// The files of `package_dir` that go into a variant, relative and '/'-separated, sorted:
// never __pycache__ or *.pyc.
std::vector<std::string> package_files(const std::filesystem::path& package_dir,
                                       const VariantContents& contents);

// Builds `<build_dir>/<variant_name>/` and returns its path. Its modes are git's (0755 for
// folders and executables, 0644 for the rest), whatever the umask, so that one commit built by
// two users gives the same variant.
util::Expected<std::filesystem::path> assemble_variant(const VariantContents& contents,
                                                       const std::filesystem::path& build_dir,
                                                       const std::string& variant_name);

}  // namespace kernelhub::builder
