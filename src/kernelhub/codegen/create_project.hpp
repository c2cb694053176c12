// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/embedded_file.hpp>
#include <kernelhub/util/expected.hpp>

// The build project of a kernel (builder.md §5), rendered from templates/project/ (compiled
// into the binary). Unlike the reference's create-pyproject, which writes into the kernel's
// own folder, the project lives apart from the sources and names them by absolute path, so a
// generated project never mixes with the user's files.
namespace kernelhub::codegen {

// The embedded templates/project/ folder.
std::span<const util::EmbeddedFile> project_template_files();

// What a cuda project compiles, decided by the builder (codegen knows no GPUs): the nvcc
// flags (-gencode per arch, then cuda-flags) of each [kernel.<name>] it compiles. A cuda
// kernel missing from `kernel_flags` is left out (cuda-minver). Without these options a cuda
// project compiles every cuda kernel with its cuda-flags for nvcc's default arch.
struct CudaProjectOptions {
  std::map<std::string, std::vector<std::string>> kernel_flags;
};

// A listed source's text, or nullopt when it cannot be read (create_project then assumes the
// worst of it). The builder reads the kernel's files; without a reader every compiled source
// is taken to embed the namespace.
using SourceReader = std::function<std::optional<std::string>(const std::filesystem::path&)>;

// The project for one backend of a kernel:
// - [torch]: CMakeLists.txt (one abi3 module `module_target(...).abi3.so` from the [torch]
//   sources and the `backend`'s [kernel.*] sources, which the builder copies into the variant
//   as `<id>.abi3.so`; with TORCH_TARGET_VERSION when torch.stable-abi names the backend),
//   torch-ext/registration.h, torch-ext/kernelhub_ops_name.h (TORCH_EXTENSION_NAME: the one
//   file that names the id, so a new id recompiles only the sources that include it: those
//   that include registration.h, and those whose text, as `read_source` gives it, says
//   TORCH_EXTENSION_NAME, which get it with -include; all compiled sources when a listed
//   header says it) and torch-ext/<python name>/_ops.py bound to
//   `_<python name>_<backend>_<unique_id>`;
// - [torch-noarch], and a [torch] backend without [kernel.*] of its own: torch-ext/<python
//   name>/_ops.py only, which picks the backend at import;
// - [tvm-ffi]: an error (not supported yet).
// Source paths in [torch] and [kernel.*] are relative to `kernel_dir`, which should be
// absolute. Nothing is written; only `read_source` reads.
util::Expected<FileSet> create_project(const config::BuildConfig& config,
                                       const std::filesystem::path& kernel_dir,
                                       std::string_view unique_id,
                                       types::Backend backend = types::Backend::cpu,
                                       const CudaProjectOptions* cuda = nullptr,
                                       const SourceReader& read_source = {});

// The compiled sources of `listed` (relative to `kernel_dir`) that must be given the kernel id
// as `macro` (TORCH_EXTENSION_NAME, TVM_FFI_EXTENSION_NAME): those whose text says `macro`
// (unreadable ones included); every compiled source when a listed header says it, or when
// there is no reader. Only these recompile when the id changes.
std::vector<std::string> sources_naming(std::string_view macro,
                                        const std::vector<std::string>& listed,
                                        const std::filesystem::path& kernel_dir,
                                        const SourceReader& read_source);

// The CMake target and file name (without ".abi3.so") of a [torch] project's module:
// `_<python name>_<backend>`, the kernel id without its unique part, so the project's
// CMakeLists.txt is the same for every id.
std::string module_target(const types::KernelName& name, types::Backend backend);

// Adds pyproject.toml and setup.py to a [torch] or [torch-noarch] project made by
// create_project, so `pip install --no-build-isolation -e <project>` gives an editable install
// of the kernel's package (what the reference's create-pyproject is for): setup.py links the
// kernel's package files from `kernel_dir` beside the generated _ops.py and, when `project` has
// a CMakeLists.txt, builds it and installs the module `_<python name>_<backend>_<unique_id>`.
util::Expected<void> add_python_packaging(FileSet& project, const config::BuildConfig& config,
                                          const std::filesystem::path& kernel_dir,
                                          std::string_view unique_id, types::Backend backend);

// The TORCH_TARGET_VERSION value torch's headers expect for a stable-ABI version
// (torch/csrc/stable/version.h): major in the top byte, minor in the next, the other six
// bytes zero, as a hex literal: 2.11 -> "0x020b000000000000".
std::string torch_target_version(const types::Version& abi);

// `text` as one CMake quoted argument ("a\"b", with \, " and $ escaped).
std::string cmake_quote(std::string_view text);

}  // namespace kernelhub::codegen
