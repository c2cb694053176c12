// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <kernelhub/hub/hub_types.hpp>

namespace kernelhub::cache::testing {

inline hub::RepoRef kernel_ref(const std::string& id = "org/relu") {
  return hub::RepoRef{*hub::RepoId::parse(id), hub::RepoType::kernel};
}

inline constexpr const char* k_commit = "0123456789abcdef0123456789abcdef01234567";
inline constexpr const char* k_other_commit = "89abcdef0123456789abcdef0123456789abcdef";
// The git blob sha1 of "hello\n" (what `git hash-object` prints).
inline constexpr const char* k_hello_sha1 = "ce013625030ba8dba906f756967f9e9ca394464a";

}  // namespace kernelhub::cache::testing
