// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/hub_error.hpp>

#include <fmt/format.h>

namespace kernelhub::server {

tl::unexpected<HubError> hub_fail(int status, std::string code, std::string message) {
  return tl::unexpected<HubError>(HubError{status, std::move(code), std::move(message)});
}

tl::unexpected<HubError> bad_request(std::string message) {
  return hub_fail(400, "", std::move(message));
}

tl::unexpected<HubError> repo_not_found(const std::string& repo) {
  return hub_fail(404, "RepoNotFound", fmt::format("repository \"{}\" not found", repo));
}

tl::unexpected<HubError> revision_not_found(const std::string& revision) {
  return hub_fail(404, "RevisionNotFound", fmt::format("revision \"{}\" not found", revision));
}

tl::unexpected<HubError> entry_not_found(const std::string& path) {
  return hub_fail(404, "EntryNotFound", fmt::format("entry \"{}\" not found", path));
}

}  // namespace kernelhub::server
