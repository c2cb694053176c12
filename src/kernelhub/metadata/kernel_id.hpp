// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/kernel_name.hpp>
#include <kernelhub/util/expected.hpp>

// The kernel id (builder.md §3 "Kernel id"): `_<python name>_<backend>_<unique>`, e.g.
// `_relu_cuda_7a4e5a7`. It is the native module's name, the TORCH_EXTENSION_NAME and the
// `torch.ops` namespace, so two builds of one kernel can be loaded side by side.
namespace kernelhub::metadata {

// What the unique part was derived from, in the reference's order of preference.
struct UniqueIdSource {
  std::optional<std::string> given;  // --unique-id (Nix passes shortRev or dirtyShortRev)
  // HEAD's *tree* id (not the commit id) and whether tracked files changed; absent outside git.
  // Computing them (libgit2) is the builder's job; this layer stays pure.
  std::optional<std::string> git_tree_id;
  bool git_dirty = false;
};

// The unique part: the given id; else the first 7 hex digits of the tree id plus "_dirty" when
// dirty; else `random_value` as lowercase RFC 4648 base32 without padding (of its 8
// little-endian bytes, as the reference's `random_identifier`).
std::string unique_id(const UniqueIdSource& source, std::uint64_t random_value);

// `unique_id` with a fresh random value from std::random_device.
std::string unique_id(const UniqueIdSource& source);

// The development id of a kernel folder without a git commit: "dev" and 10 lowercase base32
// characters of `random_value` (its 6 low bytes), e.g. "devk2x7qg4mbn". The builder makes one
// per folder and keeps it (builder/dev_unique_id.hpp), so rebuilds keep their namespace.
std::string dev_unique_id(std::uint64_t random_value);

// Whether `unique` has dev_unique_id's shape.
bool is_dev_unique_id(std::string_view unique);

// A fresh random value from std::random_device.
std::uint64_t random_id_value();

// Lowercase RFC 4648 base32 without padding.
std::string base32_lower(std::string_view bytes);

// `_<python_name>_<backend>_<unique>`.
std::string kernel_id(const types::KernelName& name, types::Backend backend,
                      std::string_view unique);

// Whether `text` is a Python identifier that can name a module: ASCII letters, digits and '_',
// not starting with a digit. Stricter than str.isidentifier(), which also takes non-ASCII
// letters that a C++ TORCH_EXTENSION_NAME could not carry.
bool is_python_identifier(std::string_view text);

// The id, checked to be a valid Python identifier (a --unique-id could spoil it).
// Error: "kernel id \"_relu_cuda_a-b\" is not a valid Python identifier".
util::Expected<std::string> checked_kernel_id(const types::KernelName& name,
                                              types::Backend backend, std::string_view unique);

}  // namespace kernelhub::metadata
