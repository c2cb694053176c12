// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/build_clean.hpp>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/builder/build_manifest.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// Adds the recorded variant `name` to the plan: each file whose hash is the recorded one, the
// caches Python wrote beside them, metadata.json when unchanged; the rest is kept.
void plan_variant(const fs::path& build_dir, const std::string& name, const BuiltFiles& record,
                  CleanPlan& plan) {
  const auto dir = build_dir / name;
  const auto current = metadata::hash_variant(record.digest.algorithm, dir);
  if (!current) {
    plan.kept.push_back({dir, fmt::format("cannot be read to compare with the build's record: {}",
                                          current.error().message)});
    return;
  }
  for (const auto& [path, hash] : current->files) {
    const auto recorded = record.digest.files.find(path);
    if (recorded == record.digest.files.end()) {
      plan.kept.push_back({dir / path, "not written by kernel-builder"});
    } else if (recorded->second != hash) {
      plan.kept.push_back({dir / path, "changed since kernel-builder built it"});
    } else {
      plan.files.push_back(dir / path);
    }
  }
  const auto meta = util::read_file(dir / "metadata.json");
  if (meta && *meta == record.metadata_json) {
    plan.files.push_back(dir / "metadata.json");
  } else if (meta) {
    plan.kept.push_back({dir / "metadata.json", "changed since kernel-builder built it"});
  }
  // hash_variant skips bytecode caches; they are Python's, made by importing the variant. It
  // also skips the signature beside metadata.json and bytecode outside __pycache__: neither is
  // the build's, so each is kept, and listed, as every file clean leaves in a variant is.
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory(error)) {
      if (it->path().filename() == "__pycache__") {
        plan.folders.push_back(it->path());
        it.disable_recursion_pending();
      }
      continue;
    }
    const auto relative = it->path().lexically_relative(dir).generic_string();
    if (relative == "metadata.json" || current->files.contains(relative)) {
      continue;  // placed above
    }
    plan.kept.push_back({it->path(), relative == "metadata.json.sigstore"
                                         ? "a signature of metadata.json (kernel-builder sign or "
                                           "CI), which clean never removes"
                                         : "not written by kernel-builder"});
  }
}

// Removes the folders the removal of `path` left empty, up to (not including) `stop`: only
// folders that held what was removed, never an empty folder an author made elsewhere.
void remove_emptied_parents(const fs::path& path, const fs::path& stop) {
  std::error_code error;
  for (auto folder = path.parent_path(); folder != stop && folder.native().size() > stop.native().size();
       folder = folder.parent_path()) {
    if (!fs::is_empty(folder, error) || error || !fs::remove(folder, error)) {
      return;
    }
  }
}

}  // namespace

CleanPlan plan_clean(const fs::path& kernel_dir) {
  CleanPlan plan;
  const auto build_dir = kernel_dir / "build";
  const bool owned = is_marked_builder_folder(build_dir);
  std::error_code error;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(build_dir, error), end; !error && it != end;
       it.increment(error)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& entry : entries) {
    const auto name = entry.filename().string();
    if (entry == builder_folder(build_dir)) {
      if (!owned) {
        plan.kept.push_back({entry, "has no CACHEDIR.TAG from kernel-builder (made by an older "
                                    "kernel-builder or another tool)"});
      }
      continue;
    }
    if (fs::is_directory(entry, error) && !fs::is_symlink(entry, error) &&
        is_generated_folder(entry)) {
      plan.folders.push_back(entry);  // a project create-project wrote, and what was built in it
      continue;
    }
    const auto record = owned && fs::is_directory(entry, error) && !fs::is_symlink(entry, error)
                            ? read_built_files(build_dir, name)
                            : std::nullopt;
    if (record) {
      plan_variant(build_dir, name, *record, plan);
    } else {
      plan.kept.push_back({entry, "kernel-builder has no record of writing it"});
    }
  }
  // Last: the records above are read from it.
  if (owned) {
    plan.folders.push_back(builder_folder(build_dir));
  }
  std::sort(plan.files.begin(), plan.files.end());
  std::sort(plan.folders.begin(), plan.folders.end());
  return plan;
}

util::Expected<void> apply_clean(const CleanPlan& plan, const fs::path& kernel_dir) {
  std::error_code error;
  for (const auto& file : plan.files) {
    if (!fs::remove(file, error) && error) {
      return util::fail(fmt::format("cannot remove \"{}\": {}", file.string(), error.message()));
    }
  }
  for (const auto& folder : plan.folders) {
    fs::remove_all(folder, error);
    if (error) {
      return util::fail(fmt::format("cannot remove \"{}\": {}", folder.string(), error.message()));
    }
  }
  const auto build_dir = kernel_dir / "build";
  for (const auto& file : plan.files) {
    remove_emptied_parents(file, build_dir);
  }
  for (const auto& folder : plan.folders) {
    remove_emptied_parents(folder, build_dir);
  }
  if (fs::is_directory(build_dir, error) && fs::is_empty(build_dir, error)) {
    fs::remove(build_dir, error);
  }
  return {};
}

const std::string_view k_editable_installs_script =
    "import importlib.metadata, json, urllib.parse\n"
    "for dist in importlib.metadata.distributions():\n"
    "    try:\n"
    "        url = json.loads(dist.read_text('direct_url.json') or '{}')\n"
    "    except ValueError:\n"
    "        continue\n"
    "    if not isinstance(url, dict) or not isinstance(url.get('dir_info'), dict):\n"
    "        continue\n"
    "    where = url.get('url', '')\n"
    "    if url['dir_info'].get('editable') and where.startswith('file://'):\n"
    "        path = urllib.parse.unquote(urllib.parse.urlparse(where).path)\n"
    "        print(f\"{dist.metadata['Name']}\\t{path}\")\n";

bool removes_an_installable_project(const CleanPlan& plan) {
  std::error_code error;
  return std::any_of(plan.folders.begin(), plan.folders.end(), [&error](const fs::path& folder) {
    return fs::exists(folder / "setup.py", error) || fs::exists(folder / "pyproject.toml", error);
  });
}

std::vector<EditableInstall> parse_editable_installs(std::string_view listing) {
  std::vector<EditableInstall> installs;
  while (!listing.empty()) {
    const auto end = std::min(listing.find('\n'), listing.size());
    const auto line = listing.substr(0, end);
    listing.remove_prefix(std::min(end + 1, listing.size()));
    const auto tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0 || tab + 1 == line.size()) {
      continue;
    }
    installs.push_back({std::string(line.substr(0, tab)),
                        fs::path(std::string(line.substr(tab + 1))).lexically_normal()});
  }
  return installs;
}

std::vector<std::pair<EditableInstall, fs::path>> editable_installs_removed(
    const CleanPlan& plan, std::span<const EditableInstall> installs) {
  std::vector<std::pair<EditableInstall, fs::path>> removed;
  for (const auto& install : installs) {
    for (const auto& folder : plan.folders) {
      const auto relative = install.directory.lexically_relative(folder.lexically_normal());
      if (!relative.empty() && *relative.begin() != "..") {
        removed.emplace_back(install, folder);
        break;
      }
    }
  }
  return removed;
}

}  // namespace kernelhub::builder
