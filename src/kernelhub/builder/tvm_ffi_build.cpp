// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/tvm_ffi_build.hpp>

#include <cstdio>
#include <variant>

#include <fmt/format.h>

#include <kernelhub/builder/incremental.hpp>
#include <kernelhub/builder/step.hpp>
#include <kernelhub/builder/tvm_ffi_project.hpp>
#include <kernelhub/builder/variant_assembly.hpp>
#include <kernelhub/builder/variant_metadata.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

codegen::CudaProjectOptions cuda_options(const CudaBuild& cuda) {
  codegen::CudaProjectOptions options;
  for (const auto& kernel : cuda.kernels) {
    options.kernel_flags[kernel.kernel] = kernel.nvcc_flags;
  }
  return options;
}

// The nvcc the plan chose, for CMake's CUDA language.
void add_cuda_arguments(const CudaBuild& cuda, bool use_ccache, Command& configure) {
  configure.argv.push_back("-DCMAKE_CUDA_COMPILER=" + cuda.nvcc.string());
  configure.argv.push_back("-DCUDAToolkit_ROOT=" + cuda.nvcc.parent_path().parent_path().string());
  if (use_ccache) {
    configure.argv.push_back("-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache");
  }
}

}  // namespace

util::Expected<BuiltVariant> build_tvm_ffi_variant(const TvmFfiBuildInputs& inputs,
                                                   const PlannedVariant& planned,
                                                   CommandRunner& runner) {
  const auto& config = inputs.config;
  const auto& tvm_ffi = std::get<config::TvmFfi>(config.framework);
  const auto python_name = config.general.name.python_name();
  const auto id =
      KH_TRY(metadata::checked_kernel_id(config.general.name, planned.backend, inputs.unique_id));
  const auto work = inputs.kernel_dir / "build" / ".kernelhub" / planned.name;
  const auto options = planned.cuda ? std::optional(cuda_options(*planned.cuda)) : std::nullopt;
  const codegen::SourceReader read_source = [](const fs::path& path) -> std::optional<std::string> {
    auto text = util::read_file(path);
    return text ? std::optional<std::string>(std::move(*text)) : std::nullopt;
  };
  const auto project = KH_TRY(tvm_ffi_project(config, inputs.kernel_dir, inputs.unique_id,
                                              planned.backend, options ? &*options : nullptr,
                                              read_source));
  KH_STEP(codegen::write_file_set(project, work / "project", codegen::Overwrite::yes));

  const bool ccache = runner.find_program("ccache").has_value();
  auto commands = cmake_commands(work / "project", work / "cmake", inputs.python.string(), ccache,
                                 inputs.kernel_dir);
  if (planned.cuda) {
    add_cuda_arguments(*planned.cuda, ccache, commands.front());
  }
  set_source_date_epoch(commands, inputs.source);
  KH_STEP(prepare_build_tree(work / "cmake", inputs.sandbox.has_value()));
  const auto incremental = prepare_incremental(commands, work / "cmake", planned.backend);
  watch_for_work(commands, planned.backend, inputs.kernel_dir, inputs.on_compile);
  std::optional<StepSandbox> sandbox;
  if (inputs.sandbox) {
    sandbox = variant_sandbox(*inputs.sandbox, inputs.kernel_dir, work,
                              planned.cuda ? toolkit_roots(planned.cuda->nvcc)
                                           : std::vector<fs::path>{});
  }
  KH_STEP(run_build_steps(commands, planned.name, sandbox, runner));
  KH_STEP(finish_incremental(incremental, work / "cmake"));
  const auto library = work / "cmake" / (id + ".so");
  if (!fs::exists(library)) {
    return util::fail(fmt::format("the build of {} did not produce \"{}\"", planned.name,
                                  library.string()));
  }

  VariantContents contents{variant_metadata(config, planned.backend, id, inputs.kernel_git,
                                            inputs.builder_version)};
  if (planned.cuda && !planned.cuda->archs.empty()) {
    contents.metadata.backend.archs = planned.cuda->archs;
  }
  contents.metadata.provenance->build = build_provenance(inputs.source, work / "cmake", {});
  contents.metadata.provenance->sandboxed = inputs.sandbox.has_value();
  contents.package_dir = inputs.kernel_dir / "tvm-ffi-ext" / python_name;
  contents.data_extensions = tvm_ffi.pyext.value_or(std::vector<std::string>{});
  if (const auto* ops = project.find(fmt::format("tvm-ffi-ext/{}/_ops.py", python_name))) {
    KH_STEP(contents.generated.add("_ops.py", ops->content));
  }
  contents.native_files = {NativeFile{library, {}}};
  const auto path = KH_TRY(assemble_variant(contents, inputs.kernel_dir / "build", planned.name));
  return BuiltVariant{planned.name, planned.backend, id, path};
}

}  // namespace kernelhub::builder
