// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-builds [DIR] [--json]`: which variants of the compliance matrix (those
// `list-variants --all` gives for DIR/build.toml, every system) DIR/build/ lacks, which of its
// folders no system yields, and, as the reference's check-builds, that each variant folder
// has a metadata.json that reads. Exit 1 when a variant is missing or its metadata is bad.
// Folders this machine's own torch builds (what `list-variants` lists) are "built here,
// outside the compliance matrix", not unexpected; and the missing variants come with the
// commands that build them, here (`build --torch ...`) or on the system they are for
// (issue 22 §7).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/load_check_record.hpp>
#include <kernelhub/metadata/built_variants.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/variants/build_coverage.hpp>
#include <kernelhub/variants/compliance_matrix.hpp>
#include <kernelhub/variants/local_variants.hpp>
#include <kernelhub/variants/system_detect.hpp>

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

// One command that builds some of the missing variants, and where to run it.
struct BuildCommand {
  std::string where;    // "here", or the system: "aarch64-linux"
  std::string command;  // "kernel-builder build DIR --torch 2.11,2.12"
  std::vector<std::string> variants;
};

// What this machine builds (list-variants): its system and the variant names.
struct ThisMachine {
  std::optional<std::string> system;
  std::optional<std::string> torch;
  std::set<std::string> buildable;
};

ThisMachine detect_this_machine(const config::BuildConfig& config) {
  const variants::SubprocessRunner runner;
  const auto host =
      variants::detect_build_host(runner, variants::DetectOptions::from_environment());
  ThisMachine machine;
  machine.system = variants::local_system_string(host.system);
  if (host.torch) {
    machine.torch = host.torch->version.to_string();
  }
  for (const auto& variant : variants::local_variants(config, host)) {
    if (variant.buildable()) {
      machine.buildable.insert(variant.name);
    }
  }
  return machine;
}

std::string quoted(const std::string& text) {
  if (text.find_first_of(" \t'\"$\\`") == std::string::npos) {
    return text;
  }
  std::string out = "'";
  for (const char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// The commands that build `missing`: a torch arch variant of a cpu or metal kernel on this
// machine's system with `--torch` (one cached environment per release); what this machine
// builds as it is with a plain build; the rest on the system each is for, or, for a GPU
// backend's arch variants here, with a --python whose torch is built for that backend.
std::vector<BuildCommand> build_commands(const std::vector<std::string>& missing,
                                         const std::vector<variants::SystemVariants>& systems,
                                         const ThisMachine& machine, const std::string& dir) {
  const auto kernel = dir == "." ? std::string() : " " + quoted(dir);
  std::vector<BuildCommand> commands;
  std::vector<std::string> plain;
  std::vector<std::string> here_variants;
  std::vector<std::string> here_torch;
  std::vector<std::string> other_python;
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> elsewhere;
  auto add_unique = [](std::vector<std::string>& list, const std::string& item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) {
      list.push_back(item);
    }
  };
  for (const auto& name : missing) {
    if (machine.buildable.contains(name)) {
      plain.push_back(name);
      continue;
    }
    const variants::ProducedVariant* produced = nullptr;
    for (const auto& system : systems) {
      for (const auto& variant : system.variants) {
        if (variant.name == name && produced == nullptr) {
          produced = &variant;
        }
      }
    }
    if (produced == nullptr) {
      continue;
    }
    const auto& set = *produced->build_set.config;
    const bool arch = name.starts_with("torch") && name.size() > 5 && name[5] >= '0' &&
                      name[5] <= '9';
    const bool torch_only = set.backend == types::Backend::cpu ||
                            set.backend == types::Backend::metal;
    if (machine.system && produced->build_set.system == *machine.system) {
      if (arch && torch_only) {
        here_variants.push_back(name);
        add_unique(here_torch, set.torch.text);
      } else {
        other_python.push_back(name);
      }
    } else {
      auto& [names, torches] = elsewhere[produced->build_set.system];
      names.push_back(name);
      if (arch) {
        add_unique(torches, set.torch.text);
      }
    }
  }
  if (!plain.empty()) {
    commands.push_back({"here", "kernel-builder build" + kernel, plain});
  }
  if (!here_variants.empty()) {
    commands.push_back({"here", fmt::format("kernel-builder build{} --torch {}", kernel,
                                            fmt::join(here_torch, ",")),
                        here_variants});
  }
  if (!other_python.empty()) {
    commands.push_back(
        {"here", fmt::format("kernel-builder build{} --python PYTHON  (a Python whose torch is "
                             "built for the variant's backend and version)",
                             kernel),
         other_python});
  }
  for (const auto& [system, entry] : elsewhere) {
    const auto& [names, torches] = entry;
    commands.push_back(
        {system,
         torches.empty()
             ? std::string("kernel-builder build")
             : fmt::format("kernel-builder build --torch {}", fmt::join(torches, ",")),
         names});
  }
  return commands;
}

void print_text(const variants::BuildCoverage& coverage, const std::vector<BadMetadata>& bad,
                const std::vector<SetAsideVariant>& set_aside, const fs::path& build_root,
                const std::vector<std::string>& unexpected,
                const std::vector<std::string>& built_here, const ThisMachine& machine,
                const std::vector<BuildCommand>& commands) {
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
  if (!commands.empty()) {
    std::printf("to build them:\n");
    for (const auto& command : commands) {
      const auto where = command.where == "here"
                             ? std::string("here")
                             : fmt::format("on an {} machine", command.where);
      std::printf("  %s: %s\n    (%s)\n", where.c_str(), command.command.c_str(),
                  fmt::format("{}", fmt::join(command.variants, ", ")).c_str());
    }
  }
  if (!built_here.empty()) {
    std::printf("built here, outside the compliance matrix (%zu, by this machine's torch %s; "
                "loaders pick them only under that torch):\n",
                built_here.size(), machine.torch.value_or("?").c_str());
    for (const auto& name : built_here) {
      std::printf("  %s\n", name.c_str());
    }
  }
  if (!unexpected.empty()) {
    std::printf("unexpected (%zu, no system builds them from this build.toml):\n",
                unexpected.size());
    for (const auto& name : unexpected) {
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
  const auto systems = variants::variants_for_config(config, matrix);
  const auto expected = variants::expected_variant_names(systems);
  const auto build_root = kernel_dir / "build";
  // A folder without metadata.json is no variant (a half-built one): it counts as missing.
  const auto folders = metadata::built_variant_names(kernel_dir);
  const auto coverage = variants::compare_builds(expected, folders);
  const auto bad = check_metadata(build_root, folders);
  const auto set_aside = set_aside_variants(build_root);
  const auto machine = detect_this_machine(config);
  std::vector<std::string> built_here;
  std::vector<std::string> unexpected;
  for (const auto& name : coverage.unexpected) {
    (machine.buildable.contains(name) ? built_here : unexpected).push_back(name);
  }
  const auto commands = build_commands(coverage.missing, systems, machine, options.dir);
  if (options.json) {
    ordered_json out = {{"build", build_root.string()},
                        {"expected", coverage.expected},
                        {"present", coverage.present},
                        {"missing", coverage.missing},
                        {"unexpected", unexpected},
                        {"built_here", built_here},
                        {"build_commands", ordered_json::array()},
                        {"invalid", ordered_json::array()},
                        {"set_aside", ordered_json::array()}};
    for (const auto& entry : bad) {
      out["invalid"].push_back({{"variant", entry.variant}, {"error", entry.problem}});
    }
    for (const auto& entry : set_aside) {
      out["set_aside"].push_back(entry.name);
    }
    for (const auto& command : commands) {
      out["build_commands"].push_back({{"where", command.where},
                                       {"command", command.command},
                                       {"variants", command.variants}});
    }
    out["ok"] = coverage.missing.empty() && bad.empty();
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  } else {
    print_text(coverage, bad, set_aside, build_root, unexpected, built_here, machine, commands);
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
                "print the expected, present, missing, unexpected, built_here (this machine's "
                "torch, outside the matrix) and invalid variants, and the build_commands for "
                "the missing ones, as JSON");
  sub->callback([options, &state] { run_check_builds(*options, state); });
}

}  // namespace kernelhub::cli::commands
