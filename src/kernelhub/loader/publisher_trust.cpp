// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/publisher_trust.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace kernelhub::loader {

namespace {

constexpr std::string_view k_trust_hint =
    "Set trust_remote_code=True or add the repository ID to the trust_remote_code allowlist "
    "to allow loading kernels from untrusted sources.";

}  // namespace

bool RemoteCodeTrust::covers(std::string_view repo_id) const {
  return all || std::ranges::find(repo_ids, repo_id) != repo_ids.end();
}

LoadResult<void> check_publisher_trust(const hub::HubClient& client, std::string_view repo_id) {
  // The publisher is everything before the first '/', as the reference splits it.
  const auto publisher = repo_id.substr(0, repo_id.find('/'));
  const auto overview = client.organization_overview(publisher);
  if (!overview) {
    // The reference's sentence, and why when the Hub could not be reached at all: "could not
    // verify" alone reads like a verdict on the publisher.
    const auto why = overview.error().kind == hub::ErrorKind::network
                         ? fmt::format(" ({})", overview.error().message)
                         : std::string();
    return load_fail(
        LoadErrorKind::value,
        fmt::format("Kernel repository '{}' could not verify publisher trust status{}. {}",
                    repo_id, why, k_trust_hint));
  }
  if (!overview->trusted_kernel_publisher) {
    return load_fail(LoadErrorKind::value,
                     fmt::format("Kernel repository '{}' is not from a trusted publisher. {}",
                                 repo_id, k_trust_hint));
  }
  return {};
}

std::string offline_trust_warning(std::string_view repo_id) {
  return fmt::format(
      "Skipping publisher trust check for '{}' because Hugging Face Hub is in offline mode.",
      repo_id);
}

}  // namespace kernelhub::loader
