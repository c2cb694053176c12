// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-builds [DIR] [--json]`: which variants of the compliance matrix (those
// `list-variants --all` gives for DIR/build.toml, every system) DIR/build/ lacks, which of its
// folders no system yields, and, as the reference's check-builds, that each variant folder
// has a metadata.json that reads. Exit 1 when a variant is missing or its metadata is bad.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/load_check_record.hpp>
#include <kernelhub/metadata/built_variants.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/variants/build_coverage.hpp>
#include <kernelhub/variants/compliance_matrix.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct CheckBuildsOptions {
  std::string dir = ".";
  bool json = false;
};

struct BadMetadata {
  std::string variant;
  std::string problem;
};

std::vector<BadMetadata> check_metadata(const fs::path& build_root,
                                        const std::vector<std::string>& folders) {
  std::vector<BadMetadata> bad;
  for (const auto& name : folders) {
    if (auto read = metadata::read_metadata_file(build_root / name / "metadata.json"); !read) {
      bad.push_back({name, read.error().message});
    }
  }
  return bad;
}

void print_text(const variants::BuildCoverage& coverage, const std::vector<BadMetadata>& bad,
                const std::vector<SetAsideVariant>& set_aside, const fs::path& build_root) {
  std::printf("%s: %zu of %zu variant(s) of the compliance matrix built\n",
              build_root.string().c_str(), coverage.present.size(), coverage.expected.size());
  if (!coverage.missing.empty()) {
    std::printf("missing (%zu):\n", coverage.missing.size());
    for (const auto& name : coverage.missing) {
      const auto aside = std::find_if(set_aside.begin(), set_aside.end(),
                                      [&](const SetAsideVariant& v) { return v.name == name; });
      std::printf("  %s%s\n", name.c_str(),
                  aside == set_aside.end() ? "" : " (built, but set aside: its load check failed)");
    }
  }
  if (!coverage.unexpected.empty()) {
    std::printf("unexpected (%zu, no system builds them from this build.toml):\n",
                coverage.unexpected.size());
    for (const auto& name : coverage.unexpected) {
      std::printf("  %s\n", name.c_str());
    }
  }
  for (const auto& entry : bad) {
    std::fprintf(stderr, "kernel-builder: error: %s: %s\n", entry.variant.c_str(),
                 entry.problem.c_str());
  }
}

void run_check_builds(const CheckBuildsOptions& options, RunState& state) {
  const auto kernel_dir = fs::absolute(options.dir).lexically_normal();
  const auto config = load_config_or_fatal(kernel_dir);
  const auto matrix = value_or_fatal(variants::builtin_compliance_matrix());
  const auto expected =
      variants::expected_variant_names(variants::variants_for_config(config, matrix));
  const auto build_root = kernel_dir / "build";
  // A folder without metadata.json is no variant (a half-built one): it counts as missing.
  const auto folders = metadata::built_variant_names(kernel_dir);
  const auto coverage = variants::compare_builds(expected, folders);
  const auto bad = check_metadata(build_root, folders);
  const auto set_aside = set_aside_variants(build_root);
  if (options.json) {
    ordered_json out = {{"build", build_root.string()},
                        {"expected", coverage.expected},
                        {"present", coverage.present},
                        {"missing", coverage.missing},
                        {"unexpected", coverage.unexpected},
                        {"invalid", ordered_json::array()},
                        {"set_aside", ordered_json::array()}};
    for (const auto& entry : bad) {
      out["invalid"].push_back({{"variant", entry.variant}, {"error", entry.problem}});
    }
    for (const auto& entry : set_aside) {
      out["set_aside"].push_back(entry.name);
    }
    out["ok"] = coverage.missing.empty() && bad.empty();
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  } else {
    print_text(coverage, bad, set_aside, build_root);
  }
  if (!coverage.missing.empty() || !bad.empty()) {
    state.exit_code = 1;
  }
}

}  // namespace

void declare_check_builds(CLI::App& app, RunState& state) {
  auto options = std::make_shared<CheckBuildsOptions>();
  auto* sub = app.add_subcommand("check-builds");
  sub->add_option("DIR", options->dir, "the kernel's folder (holds build.toml and build/)")
      ->capture_default_str();
  sub->add_flag("--json", options->json,
                "print the expected, present, missing, unexpected and invalid variants as JSON");
  sub->callback([options, &state] { run_check_builds(*options, state); });
}

}  // namespace kernelhub::cli::commands
