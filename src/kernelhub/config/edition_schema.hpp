// SPDX-License-Identifier: Apache-2.0
#pragma once

// What editions 3, 4 and 5 of build.toml allow (builder.md §2.3-2.5). They share one shape, so
// one reader serves all three, switching on these flags; editions 1 and 2 have their own
// readers (legacy_reader.hpp).
namespace kernelhub::config::detail {

struct EditionSchema {
  int edition = 5;
  bool edition_key = true;        // general.edition (v5)
  bool kernel_depends = true;     // kernel-depends in [general] and [general.<backend>] (v5)
  bool general_tpu = true;        // [general.tpu] (v5)
  bool stable_abi_table = true;   // torch.stable-abi as a per-backend table (v5)
  bool stable_abi = true;         // torch.stable-abi as a version (v4, v5)
  bool cxx_flags = true;          // [torch] and [tvm-ffi] cxx-flags (v4, v5)
  bool source = true;             // general.source (v4, v5)
  bool license_and_version = true;  // required general.license and general.version (v4, v5)
  bool framework_required = true; // v3: no framework table means torch-noarch
  bool torch_noarch = true;       // the [torch-noarch] table (v4, v5)
};

inline constexpr EditionSchema k_edition5{};

inline constexpr EditionSchema k_edition4{
    .edition = 4,
    .edition_key = false,
    .kernel_depends = false,
    .general_tpu = false,
    .stable_abi_table = false,
};

inline constexpr EditionSchema k_edition3{
    .edition = 3,
    .edition_key = false,
    .kernel_depends = false,
    .general_tpu = false,
    .stable_abi_table = false,
    .stable_abi = false,
    .cxx_flags = false,
    .source = false,
    .license_and_version = false,
    .framework_required = false,
    .torch_noarch = false,
};

}  // namespace kernelhub::config::detail
