// SPDX-License-Identifier: Apache-2.0
// `kernel-builder build [DIR] [--variant NAME]... [--python PATH] [--unique-id ID] [--json]` and
// `build-and-copy` (the same here): builds every variant of the kernel in DIR this machine can
// build into DIR/build/<variant>/, and says which backends it left out and why.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <filesystem>
#include <vector>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/abi/abi_checker.hpp>
#include <kernelhub/abi/abi_data.hpp>
#include <kernelhub/abi/violation.hpp>
#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/builder/probe_cache.hpp>
#include <kernelhub/cli/commands/build_checks.hpp>
#include <kernelhub/cli/commands/build_upload_steps.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::cli::commands {

namespace {


// Runs check-abi's rules on every variant just built. The generated project pins glibc
// symbol versions and links newer libstdc++ pieces privately (docs/build.md), so a violation
// left is one no technique fixes: by default it fails the build, as the reference's Nix check
// hook does, naming each symbol; `--abi-check warn` only reports them.
std::size_t check_variants_abi(const builder::BuildResult& result, util::Severity severity) {
  auto data = abi::embedded_abi_data();
  if (!data) {
    throw util::FatalError(data.error().message);
  }
  // Stable-ABI variants are also held to the torch stable-ABI rule at their own version, as
  // the reference's check hook passes --torch-stable-abi; noarch variants hold no native code.
  std::map<std::string, std::vector<std::filesystem::path>> by_stable_abi;
  for (const auto& variant : result.variants) {
    const auto parsed = variants::parse_variant(variant.name);
    if (parsed && parsed->framework == variants::Framework::torch_stable_abi) {
      by_stable_abi[parsed->framework_version.to_string()].push_back(variant.path);
    } else if (!parsed || parsed->is_arch()) {
      by_stable_abi[""].push_back(variant.path);
    }
  }
  std::size_t count = 0;
  for (const auto& [stable_abi, paths] : by_stable_abi) {
    abi::CheckOptions check_options;
    if (!stable_abi.empty()) {
      check_options.torch_stable_abi = stable_abi;
    }
    auto report = abi::check_paths(**data, check_options, paths);
    if (!report) {
      throw util::FatalError(report.error().message);
    }
    std::vector<util::Diagnostic> diagnostics;
    for (const auto& violation : report->violations) {
      diagnostics.push_back(abi::to_diagnostic(violation));
      diagnostics.back().severity = severity;
    }
    std::fputs(util::render_hints_once(diagnostics).c_str(), stderr);
    count += report->violations.size();
  }
  return count;
}

void print_result(const builder::BuildResult& result, const LoadCheckSummary& checks,
                  bool json) {
  if (json) {
    nlohmann::ordered_json out;
    out["unique_id"] = result.unique_id;
    out["variants"] = nlohmann::ordered_json::array();
    for (const auto& variant : result.variants) {
      out["variants"].push_back({{"name", variant.name},
                                 {"backend", types::to_string(variant.backend)},
                                 {"id", variant.id},
                                 {"path", variant.path.string()}});
    }
    // Built, but set aside because kernels.get_local_kernel cannot load them.
    out["failed"] = nlohmann::ordered_json::array();
    for (const auto& failed : checks.failed) {
      out["failed"].push_back(
          {{"name", failed.name}, {"path", failed.path.string()}, {"error", failed.message}});
    }
    out["skipped"] = nlohmann::ordered_json::array();
    for (const auto& skip : result.skipped) {
      out["skipped"].push_back(
          {{"backend", types::to_string(skip.backend)}, {"reason", skip.reason}});
    }
    std::puts(out.dump(2).c_str());
    return;
  }
  for (const auto& skip : result.skipped) {
    std::fprintf(stderr, "kernel-builder: warning: not building %s: %s\n",
                 std::string(types::to_string(skip.backend)).c_str(), skip.reason.c_str());
  }
  for (const auto& variant : result.variants) {
    std::printf("Built %s at %s\n", variant.name.c_str(), variant.path.string().c_str());
  }
}

}  // namespace

void run_build(const BuildCommandOptions& given, RunState& state) {
  auto options = given;
  options.python = builder_python(given.python);
  builder::BuildOptions build_options;
  build_options.python = options.python;
  if (!options.unique_id.empty()) {
    build_options.unique_id = options.unique_id;
  }
  build_options.builder_version = KERNELHUB_VERSION;
  if (!options.torch.empty()) {
    build_options.torch_versions = value_or_fatal(builder::parse_torch_list(options.torch));
  }
  build_options.probe_cache = builder::probe_cache_dir();
  build_options.variants = options.variants;
  const char* no_sandbox = std::getenv("KERNELHUB_NO_SANDBOX");
  if (options.no_sandbox ||
      (no_sandbox != nullptr && *no_sandbox != '\0' && std::string_view(no_sandbox) != "0")) {
    build_options.sandbox = builder::Sandboxing::off;
    std::fputs("kernel-builder: warning: building without the build sandbox (--no-sandbox): the "
               "build steps can reach the network and read any file; the variants' provenance "
               "records `sandboxed: false`, and `upload` warns about them\n",
               stderr);
  }
  std::unique_ptr<checks::ImportCheckWorker> load_checker;
  if (!options.skip_checks) {
    // The load check's interpreter imports torch and kernels while the first variant
    // compiles; a no-op rebuild compiles nothing and starts none.
    build_options.on_compile = [&load_checker, &options] {
      if (!load_checker) {
        load_checker = start_load_check_worker(options.python);
      }
    };
    run_source_checks_before_build(options.dir, options.verbose ? Verbose::yes : Verbose::no);
  }
  // CMake's and ninja's output only when a step fails, or with -v.
  builder::SubprocessCommandRunner runner(options.verbose ? builder::ToolOutput::stream
                                                          : builder::ToolOutput::on_failure);
  util::DiagnosticCollector diagnostics;
  auto result = builder::build_kernel(options.dir, build_options, runner, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!result) {
    throw util::FatalError(result.error().message);
  }
  LoadCheckSummary checks;
  if (!options.skip_checks) {
    checks = run_load_checks_after_build(*result, options.python,
                                         options.verbose ? Verbose::yes : Verbose::no,
                                         std::move(load_checker));
    if (!checks.all_loaded) {
      state.exit_code = 1;
    }
  }
  // After the load check, so a variant it set aside is never announced as built.
  print_result(*result, checks, options.json);
  if (options.abi_check != "off") {
    const auto violations = check_variants_abi(
        *result, options.abi_check == "error" ? util::Severity::error : util::Severity::warning);
    if (violations > 0) {
      std::fprintf(stderr, "kernel-builder: %s: %zu ABI violation(s) in the built variants\n",
                   options.abi_check == "error" ? "error" : "warning", violations);
      if (options.abi_check == "error") {
        state.exit_code = 1;
      }
    }
  }
}

void add_build_options(CLI::App& sub, BuildCommandOptions& options) {
  sub.add_option("DIR", options.dir, "the kernel's folder (holds build.toml)")
      ->capture_default_str();
  sub.add_option("--torch", options.torch,
                 "build against each of these torch releases (\"2.14,2.15\"), each in its own "
                 "cached environment under $XDG_CACHE_HOME/kernelhub/torch-envs made with "
                 "--python, its packages installed by uv when found (beside --python, else on "
                 "PATH; KERNELHUB_NO_UV=1 for pip) (default: the torch of --python)");
  sub.add_option("--variant", options.variants,
                 "build only this variant of the ones this machine can build (repeatable; "
                 "`list-variants` names them)")
      ->allow_extra_args(false);
  sub.add_option("--python", options.python,
                 "the Python interpreter whose torch the kernel is built against (python3: the "
                 "one beside kernel-builder when it has one, else PATH's)")
      ->capture_default_str();
  sub.add_option("--unique-id", options.unique_id,
                 "the unique part of the kernel id (default: from git, else the folder's "
                 "development id, kept in build/.kernelhub/dev-id.json)");
  sub.add_option("--abi-check", options.abi_check,
                 "run check-abi on the built variants: report violations as warnings, fail "
                 "the build on them, or skip the check")
      ->check(CLI::IsMember({"warn", "error", "off"}))
      ->capture_default_str();
  sub.add_flag("--skip-checks", options.skip_checks,
               "skip check-layout, check-ops and check-imports before the build and "
               "check-load after it");
  sub.add_flag("--no-sandbox", options.no_sandbox,
               "run cmake and ninja as they are, not in the build sandbox (bubblewrap: no "
               "network, a private HOME and /tmp, only the kernel's folder, the toolchain and "
               "the Python environment visible), for machines that cannot create namespaces; "
               "the provenance records it (also KERNELHUB_NO_SANDBOX=1)");
  sub.add_flag("--json", options.json,
               "print the built, failed (set aside by the load check) and skipped variants as "
               "JSON");
  sub.add_flag("-v,--verbose", options.verbose,
               "show CMake's and ninja's output as they run (by default only when a step "
               "fails), the optional imports check-imports allowed, and the loader's whole "
               "output when a load check fails");
}

namespace {

void declare_build_like(CLI::App& app, RunState& state, const char* name) {
  auto options = std::make_shared<BuildCommandOptions>();
  auto* sub = app.add_subcommand(name);
  add_build_options(*sub, *options);
  sub->callback([options, &state] { run_build(*options, state); });
}

}  // namespace

void declare_build(CLI::App& app, RunState& state) {
  declare_build_like(app, state, "build");
}

void declare_build_and_copy(CLI::App& app, RunState& state) {
  // Without Nix there is no store to copy out of: the variants are built in place already.
  declare_build_like(app, state, "build-and-copy");
}

}  // namespace kernelhub::cli::commands
