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
//   (`if HAS_JAX: import jax_tvm_ffi`, `if jax is not None: ...`, and their `else`), or such a
//   flag imported from one of the kernel's own modules (`from ._ops import has_jax`: the
//   generated _ops of a [tvm-ffi] kernel sets has_torch and has_jax with find_spec);
// - so is one that follows, in the same function, an `if` on such a flag whose body ends in
//   `raise` or `return` (`if not has_jax: raise RuntimeError(...)`, then `import jax`): it runs
//   only when the flag let the function go on. At module level such an `if` makes the whole
//   kernel fail to import without the module, so it guards nothing there;
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
  // Own module (top-level name) -> the availability flags it defines, for `from .m import f`.
  std::map<std::string, std::set<std::string>> module_flags;
};

// The generated _ops module of a [tvm-ffi] kernel (templates/project/tvm_ffi/_ops.py) sets
// these from find_spec; a unit test keeps the list equal to the template's.
inline const std::set<std::string> k_tvm_ffi_ops_flags = {"has_jax", "has_torch"};

// The availability flags `source` defines: names assigned in a `try` body or an `except`
// handler, names a `try` body imports, and names assigned from `find_spec(...)`.
std::set<std::string> availability_flags(std::string_view source);

// What `config` and the files of `package_dir` allow.
KernelImports kernel_imports(const config::BuildConfig& config,
                             const std::filesystem::path& package_dir);

// Checks one file's `source`; `file` is the name diagnostics use.
void check_python_imports(std::string_view file, std::string_view source,
                          const KernelImports& kernel, const ImportPolicy& policy,
                          util::DiagnosticSink& sink);

}  // namespace kernelhub::checks
