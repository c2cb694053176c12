// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Small pieces every web page shares. Every text that came from a repository or a request
// (names, paths, revisions, card text, JSON values) goes through `escape` before it reaches
// the page: a repository is untrusted input.
namespace kernelhub::server::web {

// Escapes the five characters that can end a text node or a quoted attribute.
std::string escape(std::string_view text);

// A path inside the site (`/kernels/ns/name/tree/v1/a b`) from raw parts: each part is
// percent-encoded on its own (a revision's `/` becomes `%2F`, as the Hub's URLs do), and
// `path` keeps its slashes. The result is still to be escaped when put in an attribute.
std::string url_part(std::string_view part);
std::string url_path(std::string_view path);

// "512 B", "1.5 kB", "12.3 MB": decimal units, as the Hub's file lists show sizes.
std::string human_size(std::uint64_t bytes);

// "2026-11-25 18:23 UTC".
std::string utc_time(std::int64_t seconds);

// Text that must be shown as UTF-8: true when `bytes` are valid UTF-8 with no NUL.
bool is_text(std::string_view bytes);

}  // namespace kernelhub::server::web
