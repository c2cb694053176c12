// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/build_checks.hpp>

#include <cstdio>

#include <fmt/format.h>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/probe_cache.hpp>
#include <kernelhub/builder/torch_environment.hpp>
#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/checks/import_check.hpp>
#include <kernelhub/checks/kernel_checks.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/util/file_io.hpp>

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
// The build's torch probe answers from its cache, so this costs no torch import.
std::string torch_tag(builder::CommandRunner& runner, const std::string& python) {
  const auto probe = builder::cached_probe(python, builder::torch_probe_script(), runner,
                                           builder::probe_cache_dir());
  if (!probe) {
    return {};
  }
  const auto torch = builder::parse_torch_probe(*probe);
  return torch ? torch->torch_version.flattened() : std::string();
}

// A load check loads the variant in a fresh interpreter that imports torch: seconds, the bulk
// of a no-op rebuild. Its outcome depends only on the variant's files (metadata.json holds
// their digest), the interpreter, its torch and its kernels package, and this builder; the key
// names all of them, and a variant that passed keeps the key in its build folder
// (build/.kernelhub/<variant>/load-check-passed) so an unchanged variant is not checked again.
// `interpreter` is the modules_fingerprint of the Python with torch and kernels.
std::optional<std::string> load_check_key(const builder::BuiltVariant& variant,
                                          const std::optional<std::string>& interpreter) {
  const auto metadata = util::read_file(variant.path / "metadata.json");
  if (!interpreter || !metadata || metadata->find("\"digest\"") == std::string::npos) {
    return std::nullopt;  // without a digest the files are not pinned
  }
  return hub::sha256_hex(fmt::format("kernel-builder {}\n{}\n{}", KERNELHUB_VERSION,
                                     *interpreter, *metadata));
}

std::filesystem::path load_check_stamp(const builder::BuiltVariant& variant) {
  return variant.path.parent_path() / ".kernelhub" / variant.name / "load-check-passed";
}

bool passed_before(const builder::BuiltVariant& variant, const std::optional<std::string>& key) {
  if (!key) {
    return false;
  }
  const auto stamp = util::read_file(load_check_stamp(variant));
  return stamp && *stamp == *key;
}

void remember_pass(const builder::BuiltVariant& variant, const std::optional<std::string>& key) {
  if (!key) {
    return;
  }
  std::error_code error;
  const auto stamp = load_check_stamp(variant);
  std::filesystem::create_directories(stamp.parent_path(), error);
  (void)util::write_file_atomic(stamp, *key);  // without the stamp the next build checks again
}

void forget_pass(const builder::BuiltVariant& variant) {
  std::error_code error;
  std::filesystem::remove(load_check_stamp(variant), error);
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

checks::ImportCheckOptions load_check_options(const std::string& python) {
  checks::ImportCheckOptions options;
  options.python = python;
  const auto env = hub::process_environment();
  options.local_kernels = env("LOCAL_KERNELS");
  options.kernels_cache = cache::kernels_cache_dir(env);
  return options;
}

bool run_load_checks_after_build(const builder::BuildResult& result, const std::string& python) {
  checks::SubprocessScriptRunner runner;
  builder::SubprocessCommandRunner probe_runner;
  const auto options = load_check_options(python);
  bool all_loaded = true;
  const auto torch = torch_tag(probe_runner, python);
  // One interpreter start, without importing anything, for every variant's key.
  const auto interpreter = builder::modules_fingerprint(python, {"torch", "kernels"}, probe_runner);
  for (const auto& variant : result.variants) {
    const auto tag = variant_torch_tag(variant.name);
    if (!tag.empty() && !torch.empty() && tag != torch) {
      // Built against another torch (--torch): only an environment with that torch loads it.
      std::fprintf(stderr, "kernel-builder: note: %s: not load-checked: built for another torch\n",
                   variant.name.c_str());
      continue;
    }
    const auto name = variant.path.lexically_normal().generic_string();
    const auto key = load_check_key(variant, interpreter);
    if (passed_before(variant, key)) {
      std::fprintf(stderr, "kernel-builder: %s: load check passed before on these files\n",
                   name.c_str());
      continue;
    }
    forget_pass(variant);
    auto checked = checks::check_variant_import(variant.path, options, runner);
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
    } else if (!checked->missing_dependency.empty()) {
      std::fprintf(stderr,
                   "kernel-builder: note: %s: not load-checked: %s; to check it, build or "
                   "download that kernel and set LOCAL_KERNELS=%s=<its folder>\n",
                   name.c_str(), checked->error.c_str(), checked->missing_dependency.c_str());
    } else if (checked->backend_unsupported) {
      std::fprintf(stderr, "kernel-builder: warning: %s: not load-checked: %s\n", name.c_str(),
                   checked->error.c_str());
    } else if (!checked->loaded) {
      std::fprintf(stderr,
                   "kernel-builder: error: %s: kernels.get_local_kernel cannot load it: %s\n",
                   name.c_str(), checked->error.c_str());
      all_loaded = false;
    } else {
      remember_pass(variant, key);
    }
  }
  return all_loaded;
}

}  // namespace kernelhub::cli::commands
