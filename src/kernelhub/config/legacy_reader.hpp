// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/config/toml_reader.hpp>

// Editions 1 and 2, the historic shapes the reference no longer compiles (builder.md §2.1), read
// straight into the edition-5 model:
// - v1: [general] name; [torch] include, pyext, src, universal; [kernel.X] with `language`
//   (cuda, cuda-hipify, metal) instead of `backend`.
// - v2: [general] name, universal, cuda-minver, cuda-maxver, hub, python-depends; [torch] adds
//   minver and maxver; [kernel.X] tagged by `backend` as today.
// Both derive general.backends: every backend but tpu for universal kernels, else the backends
// of the kernels. A universal kernel becomes [torch-noarch].
namespace kernelhub::config::detail {

BuildConfig read_edition1(TableReader& root);
BuildConfig read_edition2(TableReader& root);

}  // namespace kernelhub::config::detail
