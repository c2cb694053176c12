// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

// The text diff of a commit or a pull request (issue 22 §5), as the pages show it: the patch
// libgit2 printed (repository_merge's commits_diff), one line per element, classed by kind
// so the page colours additions and deletions; binary files (every compiled library of a
// build) are named, never shown.
namespace kernelhub::server::web {

// "<h2>Diff</h2><pre class=\"diff\" id=\"diff\">...</pre>"; each line is a <span> of class
// "file" (the `diff --git` line), "meta" (the rest of a file's header, "Binary files ...
// differ", a cut), "hunk" (@@), "add", "del" or "ctx". An empty patch says there is no change.
std::string diff_html(std::string_view patch);

}  // namespace kernelhub::server::web
