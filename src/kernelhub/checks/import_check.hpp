// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <kernelhub/checks/script_runner.hpp>
#include <kernelhub/util/expected.hpp>

// The import check (builder.md §6.3): loads a built variant with the REFERENCE loader,
// `kernels.get_local_kernel(path, backend=...)`, in a fresh Python process, the way a user
// would. It runs with a temporary HOME (no user config or Hub cache), in a temporary working
// folder, without PYTHONPATH (so the kernel's sources are not importable by accident), and
// offline (HF_HUB_OFFLINE=1): a variant must load from its own files. Only a variant with
// kernel-depends looks further, for its dependencies alone: in the user's LOCAL_KERNELS and
// the user's Hub cache, which the offline loader only reads. A dependency found in neither
// makes the check "not run" (missing_dependency), not failed: the variant was not loaded.
namespace kernelhub::checks {

struct ImportCheckOptions {
  std::string python = "python3";      // an interpreter with torch and `kernels` installed
  std::optional<std::string> backend;  // default: the variant's metadata.json backend
  // Where a variant's kernel-depends are looked for (see above); unused for other variants.
  // `local_kernels` as LOCAL_KERNELS spells it (relative paths are taken from our working
  // folder), `kernels_cache` the folder kernels downloads into (KERNELS_CACHE).
  std::optional<std::string> local_kernels;
  std::optional<std::filesystem::path> kernels_cache;
};

struct ImportCheckResult {
  bool loaded = false;
  // The interpreter has no `kernels` package: the check could not run (not a kernel defect).
  bool loader_missing = false;
  // The loader refused the backend ("Invalid backend 'rocm', system supported backends: ..."):
  // this machine's torch cannot load such variants, which says nothing about the variant.
  bool backend_unsupported = false;
  // A kernel-depends entry (or one of its own) found neither in LOCAL_KERNELS nor in the Hub
  // cache: the variant could not be loaded, which says nothing about its own files.
  std::string missing_dependency;
  std::string backend;  // the backend it was loaded for
  // When not loaded: the Python exception ("Type: message (notes)"), else the C++ exception
  // that ended the process ("c10::Error: <what()>"), else the output's last line. The whole
  // message, so it may span lines (never the C++ frames): render it with
  // indent_continuation.
  std::string error;
  std::string output;   // everything the process printed
};

// A load-check interpreter started before the variant it checks exists (issue 13 item 15): it
// imports kernels and torch (seconds) while the compiler runs, then loads the variant it is
// given exactly as a fresh check would: the same interpreter, environment, temporary HOME and
// working folder, the same script from the load on, and one process per variant. A variant
// with kernel-depends, whose check needs LOCAL_KERNELS and KERNELS_CACHE set before kernels is
// imported, gets a fresh process instead. Destroying an unused worker kills it.
class ImportCheckWorker {
 public:
  // Starts `options.python` (only `python` is used); fails when it cannot be started.
  static util::Expected<std::unique_ptr<ImportCheckWorker>> start(
      const ImportCheckOptions& options);
  ImportCheckWorker(const ImportCheckWorker&) = delete;
  ImportCheckWorker& operator=(const ImportCheckWorker&) = delete;
  ~ImportCheckWorker();

 private:
  ImportCheckWorker(std::string python, std::filesystem::path home, StartedScript process,
                    int niceness);
  friend util::Expected<ImportCheckResult> check_variant_import(
      const std::filesystem::path& variant, const ImportCheckOptions& options,
      ScriptRunner& runner, std::unique_ptr<ImportCheckWorker> warm);

  std::string m_python;
  std::filesystem::path m_home;
  std::optional<StartedScript> m_process;
  int m_niceness = 0;  // kernel-builder's own, given back to the process with the variant
};

// Fails only when the variant has no readable metadata.json or Python cannot be started.
// `warm`, when given and usable for this variant (see ImportCheckWorker), runs the load;
// otherwise it is discarded and a fresh process started through `runner`.
util::Expected<ImportCheckResult> check_variant_import(
    const std::filesystem::path& variant, const ImportCheckOptions& options,
    ScriptRunner& runner, std::unique_ptr<ImportCheckWorker> warm = nullptr);

// `local_kernels` (LOCAL_KERNELS' "repo=path:repo=path") with each path made absolute from the
// current folder, so a process started elsewhere finds the same folders.
std::string absolute_local_kernels(std::string_view local_kernels);

// "T: message" of a C++ exception that reached std::terminate, from the terminate handler's
// "what():" on: every line of the message, up to the C++ trace ("Exception raised from ...",
// "frame #N"), blank lines around it dropped; nullopt when there is none.
std::optional<std::string> native_exception(std::string_view output);

// `text` with `indent` after each newline: a multi-line error under a one-line prefix.
std::string indent_continuation(std::string_view text, std::string_view indent);

// The last non-empty line of `output` (a traceback's "Error: message" line).
std::string last_line(std::string_view output);

}  // namespace kernelhub::checks
