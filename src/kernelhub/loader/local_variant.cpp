// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/local_variant.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

std::vector<std::string> list_variant_dirs(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_directory(error)) {
      names.push_back(entry.path().filename().string());
    }
  }
  // Directory order is arbitrary; sorting keeps ties in the preference order reproducible.
  std::sort(names.begin(), names.end());
  return names;
}

variants::Resolution resolve_local_dir(const fs::path& dir, const variants::SystemInfo& system,
                                       const DeviceArch& device) {
  const auto names = list_variant_dirs(dir);
  variants::Resolution resolution = variants::resolve_variant_names(system, names);
  bool changed = false;
  for (auto& decision : resolution.trace) {
    if (!decision.accepted()) {
      continue;
    }
    const auto metadata =
        metadata::read_metadata_file(dir / variants::to_string(decision.variant) / "metadata.json");
    if (!metadata) {
      continue;  // an older build, or a broken one: the import reports it
    }
    if (auto reason = arch_mismatch(*metadata, device)) {
      decision.rejection = std::move(*reason);
      changed = true;
    }
  }
  if (changed) {
    resolution.trace = variants::sort_decisions(std::move(resolution.trace));
  }
  return resolution;
}

util::Expected<LocalVariantMatch> find_local_variant(const fs::path& path,
                                                     const variants::SystemInfo& system,
                                                     const DeviceArch& device) {
  LocalVariantMatch match;
  for (const fs::path& base : {path, path / "build"}) {
    match.resolution = resolve_local_dir(base, system, device);
    if (const auto* best = match.resolution.best()) {
      match.variant_path = base / variants::to_string(*best);
      return match;
    }
  }
  // `path` may be the variant itself. The reference needs its metadata.json; an older build
  // without one is recognised by its package.
  if (fs::exists(path / "metadata.json") || fs::exists(path / "__init__.py")) {
    match.resolution = {};
    match.variant_path = path;
    return match;
  }
  return util::fail(fmt::format("Cannot find a build variant for this system in {}:\n\n{}",
                                path.string(), variants::render_trace(match.resolution.trace)));
}

}  // namespace kernelhub::loader
