// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/hub_kernel.hpp>

// The publisher trust gate of `get_kernel` without trust_remote_code (loader.md §5.1, §8.7):
// only an organization whose overview says `trustedKernelPublisher` passes. The texts are the
// reference's, so Python raises the same ValueError.
namespace kernelhub::loader {

// The consent `trust_remote_code` gives: `False` (every publisher is checked), `True` (none is)
// or an allowlist of repository ids that skip the check (the others are still checked).
struct RemoteCodeTrust {
  bool all = false;
  std::vector<std::string> repo_ids;

  // Whether `repo_id` may skip the publisher check.
  bool covers(std::string_view repo_id) const;
};

// ValueError "... is not from a trusted publisher ..." when the overview says no, "... could
// not verify publisher trust status ..." when it cannot be read (user namespaces, network).
LoadResult<void> check_publisher_trust(const hub::HubClient& client, std::string_view repo_id);

// What the reference logs instead of checking when the Hub is offline.
std::string offline_trust_warning(std::string_view repo_id);

}  // namespace kernelhub::loader
