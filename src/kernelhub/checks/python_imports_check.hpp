// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <kernelhub/checks/import_policy.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/diagnostic.hpp>

// The Python-imports check of the kernel requirements (issue 3): a kernel is loaded under a
// unique module name with nothing installed but torch and its python-depends, so its Python
// may import only
// - its own modules, and those only relatively (`from ._ops import ops`): an absolute
//   `import relu` finds another build, or nothing;
// - the standard library, torch and the packages torch requires (ImportPolicy);
// - the import names of its declared python-depends (any backend's);
// - the loader that imports it, `kernels` or `kernelhub`, for `get_kernel_dep` only (how a
//   kernel receives its kernel-depends: `from kernels import get_kernel_dep`).
// Each other import is an error at `file:line:col`. Decisions for the unclear cases:
// - an import inside a `try:` body is optional (the except handles its absence): allowed;
// - so is one in a branch of an `if` on an availability flag: a name assigned in a `try` body
//   or `except` handler, a name a `try` body imports, or one assigned from `find_spec(...)`
//   (`if HAS_JAX: import jax_tvm_ffi`, `if jax is not None: ...`, and their `else`);
//   each optional import of a module not otherwise allowed is reported as a note;
// - an import under `if TYPE_CHECKING:` never runs: allowed;
// - imports inside functions run when called, so they are checked like module-level ones;
// - `importlib.import_module(...)` and `__import__` are not followed.
namespace kernelhub::checks {

struct KernelImports {
  std::string package;               // the kernel's Python name, e.g. "silu_and_mul"
  std::set<std::string> own_modules; // top-level names of its package: files, folders, _ops
  // Import name -> the python-depends entry that provides it.
  std::map<std::string, std::string> python_depends;
};

// What `config` and the files of `package_dir` allow.
KernelImports kernel_imports(const config::BuildConfig& config,
                             const std::filesystem::path& package_dir);

// Checks one file's `source`; `file` is the name diagnostics use.
void check_python_imports(std::string_view file, std::string_view source,
                          const KernelImports& kernel, const ImportPolicy& policy,
                          util::DiagnosticSink& sink);

}  // namespace kernelhub::checks
