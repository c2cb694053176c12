// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

namespace kernelhub::server::web {

// Where a card's relative links point: `links` + "/" + target for links (the file page),
// `images` + "/" + target for images (the raw file), both already URL paths. Absolute URLs,
// site paths (`/x`) and fragments (`#x`) are left as written.
struct LinkBases {
  std::string links;
  std::string images;
};

// A repository card (README.md) as HTML, through cmark-gfm with the GitHub extensions
// (tables, autolinks, strikethrough, task lists). A card is untrusted: raw HTML is left out
// (cmark-gfm's safe mode, the default since 0.29) and `javascript:` and other unsafe URLs are
// dropped, so no card can put a script or an event handler on the page. A leading YAML front
// matter block (`---` ... `---`, the Hub's card metadata) is not shown.
std::string render_markdown(std::string_view markdown, const LinkBases& bases);

// The card without its front matter, and the front matter's `license:` value ("" when none).
std::string_view strip_front_matter(std::string_view markdown);
std::string front_matter_license(std::string_view markdown);

}  // namespace kernelhub::server::web
