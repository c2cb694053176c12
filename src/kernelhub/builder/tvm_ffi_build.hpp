// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/variant_metadata.hpp>
#include <kernelhub/builder/sandbox_inputs.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/util/expected.hpp>

// One tvm-ffi variant of `kernel-builder build`: the project (tvm_ffi_project.hpp) configured
// and built with CMake and Ninja under build/.kernelhub/<variant>/, then assembled as
// build/<variant>/ with __init__.py and the kernel's other Python files from
// tvm-ffi-ext/<python name>/, the generated _ops.py, <id>.so and metadata.json (builder.md §8).
namespace kernelhub::builder {

struct TvmFfiBuildInputs {
  const config::BuildConfig& config;
  std::filesystem::path kernel_dir;  // absolute
  std::string unique_id;
  std::optional<metadata::GitStatus> kernel_git;
  BuildSource source;  // origin and SOURCE_DATE_EPOCH
  std::string builder_version;
  std::filesystem::path python;  // the interpreter with apache-tvm-ffi
  std::function<void()> on_compile = {};  // BuildOptions::on_compile
  std::optional<StepSandbox> sandbox = {};  // nullopt: --no-sandbox
};

util::Expected<BuiltVariant> build_tvm_ffi_variant(const TvmFfiBuildInputs& inputs,
                                                   const PlannedVariant& planned,
                                                   CommandRunner& runner);

}  // namespace kernelhub::builder
