// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/backend_token.hpp>
#include <kernelhub/variants/release_version.hpp>

// Build variant names (loader.md §2.1, builder.md §4): the directory names under build/ that
// say which framework, ABI and system a kernel build is for.
namespace kernelhub::variants {

enum class Framework {
  torch,             // torch212[-cxx11]-cu126-x86_64-linux
  torch_stable_abi,  // torch-stable-abi211-cu126-x86_64-linux
  tvm_ffi,           // tvm-ffi01-cu126-x86_64-linux
  torch_noarch,      // torch-cuda, torch-universal
};

// The legacy C++ ABI tag of Torch arch names; Linux builds still write "-cxx11".
enum class AbiTag { none, cxx11, cxx98 };

struct Variant {
  Framework framework = Framework::torch_noarch;
  // Torch version, stable-ABI version or tvm-ffi version (major.minor); empty for noarch.
  ReleaseVersion framework_version;
  AbiTag abi_tag = AbiTag::none;  // Framework::torch only
  // Arch variants only.
  BackendToken backend;
  std::string cpu;  // "x86_64", "aarch64": taken verbatim
  std::string os;   // "linux", "darwin", "windows": taken verbatim
  // Noarch variants only: everything after "torch-", verbatim ("cuda", "npu", "universal").
  std::string noarch_backend;

  bool is_arch() const { return framework != Framework::torch_noarch; }
  bool is_universal() const { return !is_arch() && noarch_backend == "universal"; }

  friend bool operator==(const Variant&, const Variant&) = default;
};

// Parses a name the way the reference loader's `parse_variant` does, accepting exactly the
// names it accepts. Errors name the offending part: "unknown framework in variant name \"x\"".
util::Expected<Variant> parse_variant(std::string_view name);

// The canonical name of `variant` (the reference's `variant_str`). For every name the builder
// writes, to_string(parse_variant(name)) == name; names with leading zeros in their numbers
// ("torch2010") come back normalised ("torch210").
std::string to_string(const Variant& variant);

// "torch212-cxx11" / "torch-stable-abi211" / "tvm-ffi01" / "torch".
std::string framework_string(const Variant& variant);

}  // namespace kernelhub::variants
