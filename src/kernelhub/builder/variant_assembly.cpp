// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/variant_assembly.hpp>

#include <algorithm>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

#include <kernelhub/metadata/digest.hpp>

#include <kernelhub/builder/build_manifest.hpp>
#include <kernelhub/builder/step.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

bool wanted(const fs::path& relative, const VariantContents& contents) {
  for (const auto& part : relative) {
    if (part == "__pycache__") {
      return false;
    }
  }
  const auto extension = relative.extension().string();
  if (extension == ".pyc") {
    return false;
  }
  if (contents.copy == VariantContents::Copy::all_files || extension == ".py") {
    return true;
  }
  return !extension.empty() &&
         std::find(contents.data_extensions.begin(), contents.data_extensions.end(),
                   extension.substr(1)) != contents.data_extensions.end();
}

util::Expected<void> copy_into(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::create_directories(to.parent_path(), error);
  if (!error) {
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  }
  if (error) {
    return util::fail(fmt::format("cannot copy \"{}\" to \"{}\": {}", from.string(), to.string(),
                                  error.message()));
  }
  return {};
}

// The variant's modes as git keeps them, whatever the umask of the build: folders and
// executables 0755, other files 0644. Two builds by users with umask 0022 and 0077 then give
// the same variant, mode for mode, not only byte for byte.
util::Expected<void> normalise_modes(const fs::path& dir) {
  std::error_code error;
  const auto set = [&](const fs::path& path, fs::perms perms) {
    fs::permissions(path, perms, fs::perm_options::replace, error);
    return !error;
  };
  const auto k_folder = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec;
  const auto k_file = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::others_read;
  bool ok = set(dir, k_folder);
  for (auto it = fs::recursive_directory_iterator(dir, error);
       ok && !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const auto status = it->symlink_status(error);
    if (error || fs::is_symlink(status)) {
      continue;
    }
    if (fs::is_directory(status)) {
      ok = set(it->path(), k_folder);
    } else if (fs::is_regular_file(status)) {
      const bool executable = (status.permissions() & fs::perms::owner_exec) != fs::perms::none;
      ok = set(it->path(), executable ? k_folder : k_file);
    }
  }
  if (!ok || error) {
    return util::fail(fmt::format("cannot set the modes of the files in \"{}\": {}", dir.string(),
                                  error.message()));
  }
  return {};
}

// Fills `dir` and returns what it wrote, for build_manifest's record.
util::Expected<BuiltFiles> fill_variant(const VariantContents& contents, const fs::path& dir) {
  for (const auto& relative : package_files(contents.package_dir, contents)) {
    KH_STEP(copy_into(contents.package_dir / relative, dir / relative));
  }
  KH_STEP(codegen::write_file_set(contents.generated, dir, codegen::Overwrite::yes));
  for (const auto& native : contents.native_files) {
    KH_STEP(copy_into(native.source,
                      dir / (native.name.empty() ? native.source.filename().string() : native.name)));
  }
  auto meta = contents.metadata;
  meta.digest = KH_TRY(metadata::hash_variant(metadata::DigestAlgorithm::sha256, dir));
  KH_STEP(metadata::write_metadata_file(dir / "metadata.json", meta));
  KH_STEP(normalise_modes(dir));
  return BuiltFiles{*meta.digest, metadata::to_json(meta)};
}

}  // namespace

std::vector<std::string> package_files(const fs::path& package_dir,
                                       const VariantContents& contents) {
  std::vector<std::string> files;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(package_dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_regular_file()) {
      continue;
    }
    const auto relative = it->path().lexically_relative(package_dir);
    if (wanted(relative, contents)) {
      files.push_back(relative.generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

util::Expected<fs::path> assemble_variant(const VariantContents& contents,
                                          const fs::path& build_dir,
                                          const std::string& variant_name) {
  const auto target = build_dir / variant_name;
  const auto staging = build_dir / fmt::format(".{}.tmp-{}", variant_name, getpid());
  const auto retired = build_dir / fmt::format(".{}.old-{}", variant_name, getpid());
  std::error_code error;
  fs::remove_all(staging, error);
  fs::create_directories(staging, error);
  if (error) {
    return util::fail(fmt::format("cannot create \"{}\": {}", staging.string(), error.message()));
  }
  auto filled = fill_variant(contents, staging);
  if (!filled) {
    fs::remove_all(staging, error);
    return tl::unexpected(filled.error());
  }
  // Two renames: the old variant stays whole until the new one is ready to take its place.
  if (fs::exists(target)) {
    fs::rename(target, retired, error);
    if (error) {
      fs::remove_all(staging, error);
      return util::fail(fmt::format("cannot replace \"{}\": {}", target.string(), error.message()));
    }
  }
  fs::rename(staging, target, error);
  if (error) {
    return util::fail(fmt::format("cannot move the new variant to \"{}\": {}", target.string(),
                                  error.message()));
  }
  fs::remove_all(retired, error);
  // Without the record `clean` keeps the variant: nothing is lost but the clean-up, so a
  // build does not fail on it.
  (void)write_built_files(build_dir, variant_name, *filled);
  return target;
}

}  // namespace kernelhub::builder
