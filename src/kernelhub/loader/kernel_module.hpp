// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/util/expected.hpp>

// What importing one variant directory needs (loader.md §3.1-3.2): the module name, the entry
// file and the metadata. Current builds import under their metadata id. Older builds still
// load, under a unique name derived from their path and with a warning, where the reference
// refuses them: metadata without an id, no metadata.json, or the pre-flattening layout
// build/<variant>/<name>/__init__.py.
namespace kernelhub::loader {

struct KernelModule {
  std::filesystem::path variant_path;  // absolute, lexically normal (symlinks kept)
  std::string module_name;             // the sys.modules key and torch.ops namespace
  std::filesystem::path entry_file;    // the package's __init__.py
  std::string python_name;             // the kernel name with '-' as '_'
  std::optional<metadata::Metadata> metadata;  // nullopt for builds older than metadata ids
  std::vector<std::string> warnings;           // old layout
  // kernels' DirtyValidator text when the build's provenance says a git tree had uncommitted
  // changes; Python logs it on kernelhub.validate, the C++ API prints it.
  std::optional<std::string> dirty_build;
  bool legacy() const { return !metadata.has_value(); }
};

// The `kernels` release whose public API kernelhub matches (Python: `kernelhub.compat_version`).
inline constexpr std::string_view k_compat_version = "0.17.2";

// The reference's minimum-version check: a kernel whose metadata.json has a `kernels-minver`
// newer than k_compat_version is refused, with an error naming the kernel, its variant folder
// and both versions (kernelhub's own version too). Run before anything of the variant is
// imported or dlopen'ed; an older build without metadata passes. `installed` is the kernels
// version to compare with (Python passes `kernelhub.compat_version` as it reads at call time,
// as kernels reads its `__version__`); one that does not parse passes the check, as in kernels.
util::Expected<void> check_kernels_minver(const KernelModule& module,
                                          std::string_view installed = k_compat_version);

// kernels' warning for a build from a dirty git tree (naming the kernel source, kernel-builder
// or both), word for word; nullopt for a clean build or one without provenance.
std::optional<std::string> dirty_build_warning(const metadata::Metadata& metadata,
                                               std::string_view variant);

// `path` made absolute and lexically normal, without a trailing slash; symlinks are kept.
std::filesystem::path normal_path(const std::filesystem::path& path);

util::Expected<KernelModule> resolve_kernel_module(const std::filesystem::path& variant_path);

// "<python_name>_<16 hex digits of the path's FNV-1a hash>": stable for one path and distinct for
// two, as the reference's old "<python_name>_<hash(path)>" scheme was.
std::string legacy_module_name(std::string_view python_name, const std::filesystem::path& path);

}  // namespace kernelhub::loader
