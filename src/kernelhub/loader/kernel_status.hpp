// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/loader/hub_kernel.hpp>

// kernel-status.toml (loader.md §4.2): a repository may say it moved. Only `kind = "redirect"`
// exists: loading continues at `destination`, at `revision` (default "main").
namespace kernelhub::loader {

struct KernelRedirect {
  std::string destination;
  std::string revision;
  friend bool operator==(const KernelRedirect&, const KernelRedirect&) = default;
};

// The reference's ValueErrors for a missing kind, an unknown kind, a missing destination and
// TOML that does not parse.
LoadResult<KernelRedirect> parse_kernel_status(std::string_view text);

// kernel-status.toml of `repo` at `revision`, nullopt when the repository has none. Like the
// reference, any failure to fetch it (absent file, unknown repository, network) counts as
// "no status": the steps after it report a real problem with a better message.
LoadResult<std::optional<KernelRedirect>> fetch_kernel_status(const cache::HubCache& cache,
                                                              const hub::RepoId& repo,
                                                              const std::string& revision);

// "'org/old' redirected to 'org/new'".
std::string redirect_warning(std::string_view from, std::string_view to);

}  // namespace kernelhub::loader
