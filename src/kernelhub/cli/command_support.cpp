// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/command_support.hpp>

#include <CLI/CLI.hpp>

namespace kernelhub::cli {

void RevisionOptions::collect() {
  if (version_option != nullptr && version_option->count() > 0) {
    version = version_value;
  }
  if (revision_option != nullptr && revision_option->count() > 0) {
    revision = revision_value;
  }
}

void add_revision_options(CLI::App& sub, RevisionOptions& options, std::string_view version_help,
                          std::string_view revision_help) {
  options.version_option =
      sub.add_option("--version", options.version_value, std::string(version_help));
  options.revision_option =
      sub.add_option("--revision", options.revision_value, std::string(revision_help));
  options.version_option->excludes(options.revision_option);
}

void finish_verdict(nlohmann::ordered_json& out, bool failed, bool json, RunState& state) {
  out["ok"] = !failed;
  if (json) {
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  }
  if (failed) {
    state.exit_code = 1;
  }
}

std::string uncovered_text(const std::vector<std::string>& uncovered) {
  std::string out;
  for (const std::string& path : uncovered) {
    if (path.ends_with('/')) {
      out += fmt::format("not covered by the digest: {} (a link to a folder: nothing behind it is "
                         "checked)\n",
                         path);
    } else {
      out += fmt::format("not covered by the digest: {} (bytecode: kernelhub never imports it, "
                         "other loaders may; delete it)\n",
                         path);
    }
  }
  return out;
}

}  // namespace kernelhub::cli
