// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/build_checks.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

namespace {

// The name a person would run to repeat the check alone.
const char* command_name(checks::SourceCheck check) {
  switch (check) {
    case checks::SourceCheck::layout:
      return "check-layout";
    case checks::SourceCheck::op_registrations:
      return "check-ops";
    case checks::SourceCheck::python_imports:
      return "check-imports";
  }
  return "check";
}

std::size_t count_problems(const util::DiagnosticCollector& diagnostics) {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.all().begin(), diagnostics.all().end(),
                    [](const auto& d) { return d.severity != util::Severity::note; }));
}

}  // namespace

void run_source_checks_before_build(const std::string& dir, Verbose verbose) {
  util::DiagnosticCollector ignored;
  auto loaded = config::load_build_config(dir, ignored);
  if (!loaded) {
    return;
  }
  util::DiagnosticCollector diagnostics;
  // Each check as a named step with its time (issue 13 item 11), as the load check is shown.
  for (auto check : {checks::SourceCheck::layout, checks::SourceCheck::op_registrations,
                     checks::SourceCheck::python_imports}) {
    const auto before = count_problems(diagnostics);
    const auto started = std::chrono::steady_clock::now();
    checks::run_source_check(check, dir, *loaded, diagnostics);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    const auto found = count_problems(diagnostics) - before;
    if (found == 0) {
      std::fprintf(stderr, "kernel-builder: %s passed (%.1f s)\n", command_name(check),
                   took.count());
    } else {
      std::fprintf(stderr, "kernel-builder: %s found %zu problem%s (%.1f s)\n",
                   command_name(check), found, found == 1 ? "" : "s", took.count());
    }
  }
  std::vector<util::Diagnostic> sorted;
  for (auto& diagnostic : diagnostics.sorted()) {
    if (diagnostic.severity != util::Severity::note) {
      sorted.push_back(diagnostic);
    }
    if (diagnostic.severity != util::Severity::note || verbose == Verbose::yes) {
      std::fputs(util::render(diagnostic).c_str(), stderr);
    }
  }
  if (diagnostics.has_errors()) {
    throw util::FatalError(fmt::format(
        "the source checks found {} problem{}; nothing was built (see check-layout, check-ops "
        "and check-imports)",
        sorted.size(), sorted.size() == 1 ? "" : "s"));
  }
}

std::unique_ptr<checks::ImportCheckWorker> start_load_check_worker(const std::string& python) {
  auto worker = checks::ImportCheckWorker::start(load_check_options(python));
  return worker ? std::move(*worker) : nullptr;
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

bool passed_before(const builder::BuiltVariant& variant, const std::optional<std::string>& key) {
  if (!key) {
    return false;
  }
  const auto record = current_load_check_record(variant.path);
  return record && record->outcome == LoadCheckOutcome::passed && record->key == *key;
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

LoadCheckSummary run_load_checks_after_build(builder::BuildResult& result,
                                             const std::string& python, Verbose verbose,
                                             std::unique_ptr<checks::ImportCheckWorker> warm) {
  checks::SubprocessScriptRunner runner;
  builder::SubprocessCommandRunner probe_runner;
  const auto options = load_check_options(python);
  LoadCheckSummary summary;
  // What the build learnt about `python` when it built against its torch; else one interpreter
  // start each, without importing anything.
  const auto torch = result.torch ? result.torch->torch_version.flattened()
                                  : torch_tag(probe_runner, python);
  const auto interpreter =
      result.python_fingerprint
          ? result.python_fingerprint
          : builder::modules_fingerprint(python, {"torch", "kernels"}, probe_runner);
  std::vector<builder::BuiltVariant> kept;
  bool loader_missing = false;
  for (std::size_t index = 0; index < result.variants.size(); ++index) {
    auto& variant = result.variants[index];
    const auto name = variant.path.lexically_normal().generic_string();
    const auto key = load_check_key(variant, interpreter);
    LoadCheckRecord record{LoadCheckOutcome::not_checked, key.value_or(""),
                           metadata_sha256(variant.path), {}};
    const auto tag = variant_torch_tag(variant.name);
    if (loader_missing) {
      kept.push_back(std::move(variant));
      continue;
    }
    if (passed_before(variant, key)) {
      std::fprintf(stderr, "kernel-builder: %s: load check passed before on these files\n",
                   name.c_str());
      kept.push_back(std::move(variant));
      continue;
    }
    forget_load_check(variant.path);
    if (!tag.empty() && !torch.empty() && tag != torch) {
      // Built against another torch (--torch): only an environment with that torch loads it.
      record.message = "built for another torch";
      std::fprintf(stderr, "kernel-builder: note: %s: not load-checked: %s\n",
                   variant.name.c_str(), record.message.c_str());
      write_load_check_record(variant.path, record);
      kept.push_back(std::move(variant));
      continue;
    }
    // This variant's interpreter has imported torch and kernels already when it was started
    // during the build; the next one starts importing now, while this one loads.
    auto worker = std::move(warm);
    const auto later_needs_one = [&] {
      for (auto later = index + 1; later < result.variants.size(); ++later) {
        const auto& next = result.variants[later];
        const auto next_tag = variant_torch_tag(next.name);
        if (!passed_before(next, load_check_key(next, interpreter)) &&
            (next_tag.empty() || torch.empty() || next_tag == torch)) {
          return true;
        }
      }
      return false;
    };
    if (later_needs_one()) {
      warm = start_load_check_worker(python);
    }
    const auto started = std::chrono::steady_clock::now();
    auto checked = checks::check_variant_import(variant.path, options, runner, std::move(worker));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (!checked) {
      std::fprintf(stderr, "kernel-builder: error: %s: cannot run the load check: %s\n",
                   name.c_str(), checked.error().message.c_str());
      summary.all_loaded = false;
      kept.push_back(std::move(variant));
      continue;
    }
    if (checked->loader_missing) {
      std::fprintf(stderr,
                   "kernel-builder: warning: not load-checking the variants: the kernels "
                   "package is not installed in \"%s\"\n",
                   python.c_str());
      loader_missing = true;
      kept.push_back(std::move(variant));
      continue;
    }
    if (!checked->missing_dependency.empty()) {
      record.message = checked->error;
      std::fprintf(stderr,
                   "kernel-builder: note: %s: not load-checked: %s; to check it, build or "
                   "download that kernel and set LOCAL_KERNELS=%s=<its folder>\n",
                   name.c_str(), checked->error.c_str(), checked->missing_dependency.c_str());
    } else if (checked->backend_unsupported) {
      record.message = checked->error;
      std::fprintf(stderr, "kernel-builder: warning: %s: not load-checked: %s\n", name.c_str(),
                   checked->error.c_str());
    } else if (!checked->loaded) {
      record.outcome = LoadCheckOutcome::failed;
      record.message = checked->error;
      summary.all_loaded = false;
      std::fprintf(stderr,
                   "kernel-builder: error: %s: kernels.get_local_kernel cannot load it: %s\n",
                   name.c_str(), checks::indent_continuation(checked->error, "  ").c_str());
      if (verbose == Verbose::yes) {
        std::fprintf(stderr, "%s\n", checked->output.c_str());
      }
      write_load_check_record(variant.path, record);
      if (const auto aside = set_aside_failed_variant(variant.path)) {
        std::fprintf(stderr,
                     "kernel-builder: %s was moved to %s so that it cannot be uploaded or "
                     "loaded%s\n",
                     variant.name.c_str(), aside->lexically_normal().generic_string().c_str(),
                     verbose == Verbose::yes ? "" : " (-v shows the loader's whole output)");
        summary.failed.push_back({variant.name, *aside, checked->error});
        continue;
      }
      kept.push_back(std::move(variant));
      continue;
    } else {
      record.outcome = LoadCheckOutcome::passed;
      // The check as a named step with its time (issue 13 item 11).
      std::fprintf(stderr, "kernel-builder: %s: load check passed (%.1f s)\n", name.c_str(),
                   took.count());
    }
    write_load_check_record(variant.path, record);
    kept.push_back(std::move(variant));
  }
  result.variants = std::move(kept);
  return summary;
}

void check_variants_before_upload(const std::vector<std::filesystem::path>& variants,
                                  const std::filesystem::path& variants_root,
                                  const std::string& python, NoCheck no_check) {
  std::vector<std::string> refused;
  const auto aside = set_aside_variants(variants_root);
  if (no_check == NoCheck::yes) {
    std::fprintf(stderr,
                 "kernel-builder: warning: --no-check: publishing %zu variant(s) without making "
                 "sure that kernels.get_local_kernel loads them\n",
                 variants.size());
    for (const auto& failed : aside) {
      std::fprintf(stderr,
                   "kernel-builder: warning: %s is not published: its last load check failed "
                   "and it was set aside at %s\n",
                   failed.name.c_str(), failed.path.generic_string().c_str());
    }
    return;
  }
  for (const auto& failed : aside) {
    refused.push_back(fmt::format("{}: its last load check failed ({}); the build set it aside "
                                  "at {}",
                                  failed.name, checks::indent_continuation(failed.message, "    "),
                                  failed.path.generic_string()));
  }
  checks::SubprocessScriptRunner runner;
  const auto options = load_check_options(python);
  for (const auto& variant : variants) {
    const auto name = variant.filename().string();
    if (const auto record = current_load_check_record(variant)) {
      if (record->outcome == LoadCheckOutcome::failed) {
        refused.push_back(fmt::format("{}: its last load check failed ({})", name,
                                      checks::indent_continuation(record->message, "    ")));
      } else if (record->outcome == LoadCheckOutcome::not_checked) {
        std::fprintf(stderr, "kernel-builder: note: %s was not load-checked by the build: %s\n",
                     name.c_str(), record->message.c_str());
      }
      continue;
    }
    // A hand-assembled or foreign build, or files changed since the build's check.
    std::fprintf(stderr,
                 "kernel-builder: %s: no load check on record for these files; checking it "
                 "now\n",
                 name.c_str());
    const auto checked = checks::check_variant_import(variant, options, runner);
    if (!checked) {
      refused.push_back(fmt::format("{}: cannot run the load check: {}", name,
                                    checked.error().message));
    } else if (checked->loader_missing) {
      refused.push_back(fmt::format(
          "{}: cannot run the load check: the kernels package is not installed in \"{}\" "
          "(--python)",
          name, python));
    } else if (!checked->missing_dependency.empty() || checked->backend_unsupported) {
      std::fprintf(stderr, "kernel-builder: warning: %s: not load-checked: %s\n", name.c_str(),
                   checked->error.c_str());
    } else if (!checked->loaded) {
      refused.push_back(fmt::format("{}: kernels.get_local_kernel cannot load it: {}", name,
                                    checks::indent_continuation(checked->error, "    ")));
    } else {
      write_load_check_record(
          variant, {LoadCheckOutcome::passed, {}, metadata_sha256(variant), {}});
    }
  }
  if (!refused.empty()) {
    throw util::FatalError(fmt::format(
        "not uploading: {} variant{} would not load for users:\n  {}\nfix the kernel and "
        "build again (or pass --no-check to publish anyway)",
        refused.size(), refused.size() == 1 ? "" : "s", fmt::join(refused, "\n  ")));
  }
}

}  // namespace kernelhub::cli::commands
