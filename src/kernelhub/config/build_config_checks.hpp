// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/config/toml_reader.hpp>

// Checks across sections, made once a file has been read: things that are legal one key at a
// time but do not make sense together.
namespace kernelhub::config::detail {

void check_build_config(ReadContext& ctx, const BuildConfig& config, int source_edition);

}  // namespace kernelhub::config::detail
