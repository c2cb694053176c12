// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/config/edition_schema.hpp>
#include <kernelhub/config/toml_reader.hpp>

// The framework table of editions 3-5: exactly one of [torch], [torch-noarch], [tvm-ffi]
// (edition 3: [torch], [tvm-ffi] or none, which means torch-noarch).
namespace kernelhub::config::detail {

Framework read_framework(TableReader& root, const EditionSchema& schema);

// [torch] as editions 1 and 2 wrote it: include, pyext, src, minver and maxver (v2 only), and
// `universal` (v1 only, read by the caller).
Torch read_legacy_torch(TableReader& torch, bool versions);

}  // namespace kernelhub::config::detail
