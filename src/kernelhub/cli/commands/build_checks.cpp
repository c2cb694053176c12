// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/build_checks.hpp>

#include <cstdio>

#include <fmt/format.h>

#include <kernelhub/checks/import_check.hpp>
#include <kernelhub/checks/kernel_checks.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

void run_source_checks_before_build(const std::string& dir) {
  util::DiagnosticCollector ignored;
  auto loaded = config::load_build_config(dir, ignored);
  if (!loaded) {
    return;
  }
  util::DiagnosticCollector diagnostics;
  for (auto check : {checks::SourceCheck::layout, checks::SourceCheck::op_registrations,
                     checks::SourceCheck::python_imports}) {
    checks::run_source_check(check, dir, *loaded, diagnostics);
  }
  const auto sorted = diagnostics.sorted();
  for (const auto& diagnostic : sorted) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (diagnostics.has_errors()) {
    throw util::FatalError(fmt::format(
        "the source checks found {} problem{}; nothing was built (see check-layout, check-ops "
        "and check-imports)",
        sorted.size(), sorted.size() == 1 ? "" : "s"));
  }
}

bool run_load_checks_after_build(const builder::BuildResult& result, const std::string& python) {
  checks::SubprocessScriptRunner runner;
  checks::ImportCheckOptions options;
  options.python = python;
  bool all_loaded = true;
  for (const auto& variant : result.variants) {
    auto checked = checks::check_variant_import(variant.path, options, runner);
    const auto name = variant.path.lexically_normal().generic_string();
    if (!checked) {
      std::fprintf(stderr, "kernel-builder: error: %s: cannot run the load check: %s\n",
                   name.c_str(), checked.error().message.c_str());
      all_loaded = false;
    } else if (checked->loader_missing) {
      std::fprintf(stderr,
                   "kernel-builder: warning: not load-checking the variants: the kernels "
                   "package is not installed in \"%s\"\n",
                   python.c_str());
      return all_loaded;
    } else if (checked->backend_unsupported) {
      std::fprintf(stderr, "kernel-builder: warning: %s: not load-checked: %s\n", name.c_str(),
                   checked->error.c_str());
    } else if (!checked->loaded) {
      std::fprintf(stderr,
                   "kernel-builder: error: %s: kernels.get_local_kernel cannot load it: %s\n",
                   name.c_str(), checked->error.c_str());
      all_loaded = false;
    }
  }
  return all_loaded;
}

}  // namespace kernelhub::cli::commands
