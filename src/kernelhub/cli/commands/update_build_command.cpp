// SPDX-License-Identifier: Apache-2.0
// `update-build [KERNEL_DIR]`: rewrites build.toml as edition 5, keeping its comments and
// layout (config/edition_upgrade.hpp). Writes only when the text changed, atomically; on any
// error the file is left as it was.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/diagnostic_json.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/config/edition_upgrade.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_diff_context = 3;

struct UpdateBuildOptions {
  std::string kernel_dir = ".";
  bool dry_run = false;
  bool json = false;
  std::string license;
  bool canonical = false;
};

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const auto length = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return lines;
}

// A unified diff of two small texts (a build.toml), from a longest-common-subsequence table.
std::string unified_diff(std::string_view before, std::string_view after, const std::string& name) {
  const auto a = split_lines(before);
  const auto b = split_lines(after);
  std::vector<std::vector<std::uint32_t>> common(a.size() + 1,
                                                 std::vector<std::uint32_t>(b.size() + 1));
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;) {
      common[i][j] =
          a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  struct Op {
    char kind;  // ' ', '-', '+'
    std::size_t a_line;
    std::size_t b_line;
  };
  std::vector<Op> ops;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ops.push_back({' ', i++, j++});
    } else if (i < a.size() && (j == b.size() || common[i + 1][j] >= common[i][j + 1])) {
      // Removals first on a tie, so a changed line reads "-old" then "+new", as diff(1) has it.
      ops.push_back({'-', i++, j});
    } else {
      ops.push_back({'+', i, j++});
    }
  }
  std::string out = fmt::format("--- a/{0}\n+++ b/{0}\n", name);
  std::size_t at = 0;
  while (at < ops.size()) {
    const auto change = std::find_if(ops.begin() + static_cast<std::ptrdiff_t>(at), ops.end(),
                                     [](const Op& op) { return op.kind != ' '; });
    if (change == ops.end()) {
      break;
    }
    const auto first = static_cast<std::size_t>(change - ops.begin());
    const auto begin = first > k_diff_context ? first - k_diff_context : 0;
    // Extend the hunk while at most two contexts of unchanged lines separate the changes.
    std::size_t end = first;
    for (std::size_t k = first; k < ops.size() && k <= end + 2 * k_diff_context + 1; ++k) {
      if (ops[k].kind != ' ') {
        end = k;
      }
    }
    end = std::min(ops.size(), end + k_diff_context + 1);
    std::size_t a_count = 0;
    std::size_t b_count = 0;
    std::string body;
    for (std::size_t k = begin; k < end; ++k) {
      const auto& op = ops[k];
      const auto text = op.kind == '+' ? b[op.b_line] : a[op.a_line];
      a_count += op.kind != '+' ? 1 : 0;
      b_count += op.kind != '-' ? 1 : 0;
      body += op.kind;
      body += text;
      if (text.empty() || text.back() != '\n') {
        body += "\n\\ No newline at end of file\n";
      }
    }
    out += fmt::format("@@ -{},{} +{},{} @@\n", ops[begin].a_line + (a_count > 0 ? 1 : 0), a_count,
                       ops[begin].b_line + (b_count > 0 ? 1 : 0), b_count);
    out += body;
    at = end;
  }
  return out;
}

std::string_view method_name(config::UpgradeMethod method) {
  switch (method) {
    case config::UpgradeMethod::unchanged:
      return "unchanged";
    case config::UpgradeMethod::edited:
      return "edited";
    case config::UpgradeMethod::rewritten:
      return "rewritten";
  }
  return "unchanged";
}

void print(std::FILE* stream, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stream);
}

void run_update_build(const UpdateBuildOptions& options, RunState& state) {
  const fs::path dir(options.kernel_dir);
  require_directory(options.kernel_dir);
  const auto path = dir / "build.toml";
  const auto text = util::read_file(path);
  if (!text) {
    throw util::FatalError(text.error().message);
  }
  util::DiagnosticCollector diagnostics;
  config::UpgradeOptions upgrade_options{};
  upgrade_options.canonical = options.canonical;
  if (!options.license.empty()) {
    upgrade_options.license = options.license;
  }
  const auto upgrade =
      config::upgrade_build_toml_text(*text, path.string(), diagnostics, upgrade_options);
  if (!options.json) {
    for (const auto& diagnostic : diagnostics.sorted()) {
      print(stderr, util::render(diagnostic));
    }
  }
  nlohmann::json report = {{"file", path.string()},
                           {"diagnostics", diagnostics_to_json(diagnostics.sorted())}};
  if (!upgrade) {
    if (!options.json) {
      throw util::FatalError(upgrade.error().message);
    }
    report["updated"] = false;
    report["error"] = upgrade.error().message;
    print(stdout, report.dump(2) + "\n");
    state.exit_code = 1;
    return;
  }
  const bool changed = upgrade->text != *text;
  if (changed && !options.dry_run) {
    if (auto written = util::write_file_atomic(path, upgrade->text); !written) {
      throw util::FatalError(written.error().message);
    }
  }
  const auto name = path.filename().string();
  if (options.json) {
    report["source_edition"] = upgrade->source_edition;
    report["edition"] = config::k_current_edition;
    report["method"] = method_name(upgrade->method);
    report["changed"] = changed;
    report["updated"] = changed && !options.dry_run;
    if (options.dry_run) {
      report["text"] = upgrade->text;
      report["diff"] = changed ? unified_diff(*text, upgrade->text, name) : std::string();
    }
    print(stdout, report.dump(2) + "\n");
    return;
  }
  if (!changed) {
    print(stdout, fmt::format("{} is already edition {}\n", name, config::k_current_edition));
    return;
  }
  if (options.dry_run) {
    print(stdout, unified_diff(*text, upgrade->text, name));
    print(stderr, fmt::format("dry run: {} was not written\n", name));
    return;
  }
  if (upgrade->source_edition == config::k_current_edition) {
    print(stdout, fmt::format("rewrote {} in the canonical edition-{} layout\n", name,
                              config::k_current_edition));
    return;
  }
  print(stdout,
        fmt::format("upgraded {} from edition {} to {}{}\n", name, upgrade->source_edition,
                    config::k_current_edition,
                    upgrade->method == config::UpgradeMethod::rewritten && !options.canonical
                        ? " (re-serialised: comments were not kept)"
                        : ""));
}

}  // namespace

void declare_update_build(CLI::App& app, RunState& state) {
  auto* sub = app.add_subcommand("update-build");
  auto options = std::make_shared<UpdateBuildOptions>();
  sub->add_option("KERNEL_DIR", options->kernel_dir,
                  "kernel directory holding build.toml (default: the current directory)");
  sub->add_flag("--dry-run", options->dry_run,
                "print the change as a unified diff instead of writing build.toml");
  sub->add_option("--license", options->license,
                  "SPDX license to write when build.toml has none (legacy editions 1-3 may lack "
                  "it; edition 5 requires it)")
      ->type_name("SPDX-ID");
  sub->add_flag("--canonical", options->canonical,
                "rewrite build.toml in the canonical edition-5 layout (also at edition 5); "
                "comments are not kept");
  sub->add_flag("--json", options->json,
                "print a JSON report (editions, method, diagnostics; with --dry-run the new text "
                "and the diff)");
  sub->callback([options, &state] { run_update_build(*options, state); });
}

}  // namespace kernelhub::cli::commands
