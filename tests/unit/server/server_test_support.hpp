// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdlib>

#include <git2.h>

// Shared by the server tests (one definition each: the tests compile in unity batches).
namespace kernelhub::server::testing {

// The write token the tests' servers accept.
inline constexpr const char* k_token = "secret-token";

inline bool have_git() { return std::system("git --version > /dev/null 2>&1") == 0; }

// Frees a libgit2 repository handle (std::unique_ptr's deleter).
struct RepoCloser {
  void operator()(git_repository* repo) const { git_repository_free(repo); }
};

}  // namespace kernelhub::server::testing
