// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/hub/hub_types.hpp>

// URL building exactly as huggingface_hub does it: string concatenation on the endpoint,
// `quote(rev, safe="")` for revisions, `quote(path)` for resolve paths (hub-api.md §1.2).
namespace kernelhub::hub {

// Percent-encodes everything outside `A-Za-z0-9_.-~` and the characters in `safe`.
std::string url_quote(std::string_view text, std::string_view safe = "/");

// `{endpoint}/api/{T}/{repo}`.
std::string api_repo_url(std::string_view endpoint, const RepoRef& repo);
// `{endpoint}/{prefix}{repo}/resolve/{quote(rev, safe="")}/{quote(path)}`.
std::string resolve_url(std::string_view endpoint, const RepoRef& repo, std::string_view revision,
                        std::string_view path);
// `{endpoint}/api/{T}/{repo}/tree/{rev}[/{quote(path, safe="")}]?recursive=..&expand=false`.
std::string tree_url(std::string_view endpoint, const RepoRef& repo, std::string_view revision,
                     std::string_view path, Recursive recursive);

// The `rel="next"` target of a GitHub-style Link header, if any.
std::optional<std::string> link_next(std::string_view link_header);

// "scheme://host:port" of an absolute URL (lowercased host; default ports made explicit),
// or nullopt for a relative one. Used to drop the token when a redirect leaves the host.
std::optional<std::string> url_origin(std::string_view url);
// True for an absolute http:// or https:// URL (any case). Only these are ever requested: a
// redirect to gopher:// or file:// would turn the client into a raw TCP or local-file reader.
bool is_http_url(std::string_view url);
// Resolves a Location header against the URL it answered: absolute stays, `/path` keeps the
// origin (the query of the base is dropped), anything else is taken relative to the base's
// directory.
std::string resolve_location(std::string_view base_url, std::string_view location);

// Removes a leading `W/` and surrounding quotes from an ETag.
std::string normalize_etag(std::string_view etag);

}  // namespace kernelhub::hub
