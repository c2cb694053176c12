// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/incremental.hpp>

#include <algorithm>

#include <kernelhub/builder/job_limit.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// One argument a line: arguments may hold spaces but never newlines.
std::string stamp_text(const Command& command) {
  std::string text;
  for (const auto& arg : command.argv) {
    text += arg + "\n";
  }
  return text;
}

bool has_jobs_flag(const Command& command) {
  return std::any_of(command.argv.begin(), command.argv.end(),
                     [](const std::string& arg) { return arg.starts_with("-j"); });
}

// Whether `build_tree`'s CMakeCache.txt was made for another folder: the kernel folder was
// copied or moved with its build/. CMake refuses such a cache ("The current CMakeCache.txt
// directory ... is different"), and its build.ninja names the old folder's files.
bool configured_elsewhere(const fs::path& build_tree) {
  const auto cache = util::read_file(build_tree / "CMakeCache.txt");
  if (!cache) {
    return false;
  }
  static constexpr std::string_view k_key = "CMAKE_CACHEFILE_DIR:INTERNAL=";
  const auto at = cache->find(k_key);
  if (at == std::string::npos) {
    return false;
  }
  const auto begin = at + k_key.size();
  const auto end = cache->find('\n', begin);
  const fs::path recorded(cache->substr(begin, end == std::string::npos ? end : end - begin));
  std::error_code error;
  return !fs::equivalent(recorded, build_tree, error) || error;
}

}  // namespace

IncrementalBuild prepare_incremental(std::vector<Command>& commands, const fs::path& build_tree,
                                     types::Backend backend) {
  IncrementalBuild build;
  if (commands.empty()) {
    return build;
  }
  auto& ninja = commands.back();
  if (commands.size() > 1 && !has_jobs_flag(ninja)) {
    const auto kind = backend == types::Backend::cpu ? CompilerKind::cxx : CompilerKind::device;
    const auto jobs = job_limit(available_cores(), available_memory(), kind);
    ninja.argv.push_back("-j" + std::to_string(jobs));
  }
  if (commands.size() < 2) {
    return build;
  }
  const auto wanted = stamp_text(commands.front());
  std::error_code error;
  const auto stamp = util::read_file(build_tree / k_configure_stamp);
  if (stamp && *stamp == wanted && fs::is_regular_file(build_tree / "build.ninja", error) &&
      fs::is_regular_file(build_tree / "CMakeCache.txt", error)) {
    commands.erase(commands.begin());
    return build;
  }
  if (configured_elsewhere(build_tree)) {
    // Configured from scratch here; what the old folder built is of no use to this one.
    fs::remove_all(build_tree, error);
  }
  // A configure with other arguments must not be mistaken for this one if it fails midway.
  fs::remove(build_tree / k_configure_stamp, error);
  build.configure_stamp = wanted;
  return build;
}

void watch_for_work(std::vector<Command>& commands, types::Backend backend,
                    const fs::path& kernel_dir, const std::function<void()>& on_compile) {
  if (commands.empty()) {
    return;
  }
  commands.back().progress_label = std::string(types::to_string(backend));
  commands.back().progress_root = kernel_dir;
  commands.back().on_work = on_compile;
  if (commands.size() > 1 && on_compile) {
    on_compile();
  }
}

util::Expected<void> finish_incremental(const IncrementalBuild& build, const fs::path& build_tree) {
  if (!build.configure_stamp) {
    return {};
  }
  return util::write_file_atomic(build_tree / k_configure_stamp, *build.configure_stamp);
}

}  // namespace kernelhub::builder
