// SPDX-License-Identifier: Apache-2.0
// `kernel-builder list-variants [DIR] [--all [--arch]] [--json]`: the build variants of the
// kernel in DIR. Without --all, the ones this machine can build (torch from the active Python,
// nvcc/hipcc/icpx from PATH), printed one per line, with a note on stderr for each backend
// that cannot be built here and why; exit status 1 when none can. With --all, every variant
// the compliance matrix yields for the kernel's build.toml, on every system (the reference's
// `nix eval .#variants`; with --arch, `.#archVariants`).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/variants/build_variants.hpp>
#include <kernelhub/variants/local_variants.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct ListVariantsOptions {
  std::string kernel_dir = ".";
  bool all = false;
  bool arch = false;
  bool json = false;
};

config::BuildConfig load_config(const std::string& kernel_dir) {
  require_directory(kernel_dir);
  util::DiagnosticCollector diagnostics;
  auto loaded = config::load_build_config(kernel_dir, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!loaded) {
    throw util::FatalError(loaded.error().message);
  }
  return std::move(loaded->config);
}

template <typename T>
ordered_json optional_json(const std::optional<T>& value) {
  return value ? ordered_json(value->to_string()) : ordered_json();
}

void print_lines(const std::vector<std::string>& lines) {
  for (const auto& line : lines) {
    std::fputs((line + "\n").c_str(), stdout);
  }
}

void list_all(const config::BuildConfig& config, const ListVariantsOptions& options) {
  const auto matrix = variants::builtin_compliance_matrix();
  if (!matrix) {
    throw util::FatalError(matrix.error().message);
  }
  const auto systems = variants::variants_for_config(config, *matrix);
  if (options.json) {
    ordered_json out = {{"kernel", config.general.name.str()}, {"systems", ordered_json::array()}};
    for (const auto& system : systems) {
      ordered_json entry = {{"system", system.system}, {"variants", ordered_json::array()}};
      for (const auto& variant : system.variants) {
        const auto& set = *variant.build_set.config;
        entry["variants"].push_back({{"name", variant.name},
                                     {"torch", set.torch.text},
                                     {"backend", types::to_string(set.backend)},
                                     {"backend_version", set.backend_version
                                                             ? ordered_json(set.backend_version->text)
                                                             : ordered_json()},
                                     {"bundle", set.bundle}});
      }
      entry["arch_variants"] = system.arch_variants;
      out["systems"].push_back(std::move(entry));
    }
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  // Noarch names recur on every system; list each once, in system order.
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& system : systems) {
    std::vector<std::string> of_system = system.arch_variants;
    if (!options.arch) {
      of_system.clear();
      for (const auto& variant : system.variants) {
        of_system.push_back(variant.name);
      }
    }
    for (auto& name : of_system) {
      if (seen.insert(name).second) {
        names.push_back(std::move(name));
      }
    }
  }
  print_lines(names);
}

void list_local(const config::BuildConfig& config, const ListVariantsOptions& options, RunState& state) {
  const variants::SubprocessRunner runner;
  const auto host = variants::detect_build_host(runner, variants::DetectOptions::from_environment());
  const auto local = variants::local_variants(config, host);
  const bool any = std::any_of(local.begin(), local.end(),
                               [](const variants::LocalVariant& v) { return v.buildable(); });
  if (!any) {
    state.exit_code = 1;
  }
  if (options.json) {
    const auto system = variants::local_system_string(host.system);
    ordered_json out = {
        {"kernel", config.general.name.str()},
        {"system", system ? ordered_json(*system) : ordered_json()},
        {"python", host.python.empty() ? ordered_json() : ordered_json(host.python)},
        {"torch", host.torch ? ordered_json(host.torch->version.to_string()) : ordered_json()},
        {"tvm_ffi", optional_json(host.system.tvm_ffi_version)},
        {"toolchains",
         {{"nvcc", optional_json(host.toolchains.nvcc)},
          {"hipcc", host.toolchains.hipcc},
          {"icpx", optional_json(host.toolchains.icpx)}}},
        {"variants", ordered_json::array()}};
    for (const auto& variant : local) {
      ordered_json entry = {{"backend", types::to_string(variant.backend)},
                            {"buildable", variant.buildable()}};
      entry[variant.buildable() ? "name" : "reason"] =
          variant.buildable() ? variant.name : variant.reason;
      out["variants"].push_back(std::move(entry));
    }
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  for (const auto& variant : local) {
    if (variant.buildable()) {
      std::fputs((variant.name + "\n").c_str(), stdout);
    } else {
      std::fputs(fmt::format("note: {}: not buildable here: {}\n", types::to_string(variant.backend),
                             variant.reason)
                     .c_str(),
                 stderr);
    }
  }
}

void run_list_variants(const ListVariantsOptions& options, RunState& state) {
  const auto config = load_config(options.kernel_dir);
  if (options.all) {
    list_all(config, options);
  } else {
    list_local(config, options, state);
  }
}

}  // namespace

void declare_list_variants(CLI::App& app, RunState& state) {
  auto options = std::make_shared<ListVariantsOptions>();
  auto* sub = app.add_subcommand("list-variants");
  sub->add_option("KERNEL_DIR", options->kernel_dir, "kernel directory holding build.toml")
      ->capture_default_str();
  auto* all = sub->add_flag(
      "--all", options->all,
      "every variant the compliance matrix yields for this kernel, on every system");
  sub->add_flag("--arch", options->arch,
                "with --all: the Torch/tvm-ffi arch names of the same builds (dev shells)")
      ->needs(all);
  sub->add_flag("--json", options->json, "print the result as JSON on stdout");
  sub->callback([options, &state] { run_list_variants(*options, state); });
}

}  // namespace kernelhub::cli::commands
