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

namespace {

// "215" for the torch 2.15 of `python`, as arch variant names spell it; "" when unknown.
std::string torch_tag(checks::ScriptRunner& runner, const std::string& python) {
  checks::Script script;
  script.argv = {python, "-c",
                 "import torch; v = torch.__version__.split('+')[0].split('.'); "
                 "print('kernelhub-torch-tag', v[0] + v[1])"};
  auto output = runner.run(script);
  if (!output || output->exit_code != 0) {
    return {};
  }
  const auto line = checks::last_line(output->output);
  const std::string_view prefix = "kernelhub-torch-tag ";
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : std::string();
}

// The torch tag of an arch variant's name ("torch215-cxx11-cpu-..." -> "215"); "" for noarch
// ("torch-cpu") and other frameworks.
std::string variant_torch_tag(const std::string& name) {
  std::size_t end = 5;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') {
    ++end;
  }
  return name.rfind("torch", 0) == 0 && end > 5 ? name.substr(5, end - 5) : std::string();
}

}  // namespace

bool run_load_checks_after_build(const builder::BuildResult& result, const std::string& python) {
  checks::SubprocessScriptRunner runner;
  checks::ImportCheckOptions options;
  options.python = python;
  bool all_loaded = true;
  const auto torch = torch_tag(runner, python);
  for (const auto& variant : result.variants) {
    const auto tag = variant_torch_tag(variant.name);
    if (!tag.empty() && !torch.empty() && tag != torch) {
      // Built against another torch (--torch): only an environment with that torch loads it.
      std::fprintf(stderr, "kernel-builder: note: %s: not load-checked: built for another torch\n",
                   variant.name.c_str());
      continue;
    }
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
