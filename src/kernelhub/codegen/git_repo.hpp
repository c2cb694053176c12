// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>

#include <kernelhub/util/expected.hpp>

// The one place that talks to libgit2 (git2.h stays inside git_repo.cpp).
namespace kernelhub::codegen {

// Creates a git repository in `dir` (reinitializing an existing one is harmless) and stages
// every file under it that its .gitignore files do not exclude, without committing: what
// `git init && git add --all` does, and what the reference's init leaves behind.
util::Expected<void> init_repository_and_stage_all(const std::filesystem::path& dir);

}  // namespace kernelhub::codegen
