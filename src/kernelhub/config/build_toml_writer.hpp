// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <kernelhub/config/build_config.hpp>

// Canonical edition-5 text for a BuildConfig. Used where a file cannot be upgraded by editing
// its text (edition_upgrade.hpp) and by tests (reading what we wrote gives the same config).
// toml++ keeps tables in a sorted map, so it cannot emit keys in the reference's field order;
// the layout is written here and only the quoting of strings is left to toml++.
namespace kernelhub::config {

// Keys follow the reference's `v5::Build` field order (name, version, edition, license, ...;
// [kernel.*] starts with `backend`), plain keys before sub-tables, kernels in model order.
// Arrays stay on one line when it fits in 80 columns, else one element per line.
std::string write_build_toml(const BuildConfig& config);

// A TOML basic string literal for `value`, quotes and escapes included.
std::string toml_string(std::string_view value);
// `key` bare when it only uses A-Z a-z 0-9 _ -, else quoted.
std::string toml_key(std::string_view key);
// `["a", "b"]` on one line.
std::string toml_inline_array(std::span<const std::string> values);

}  // namespace kernelhub::config
