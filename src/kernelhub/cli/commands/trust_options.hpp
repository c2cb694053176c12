// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <kernelhub/loader/publisher_trust.hpp>

// The consent to kernels from publishers the Hub does not call trusted, for the commands that
// pin a project's kernels (`kernelhub lock`, `kernelhub download PROJECT`): the command-line
// form of get_kernel's trust_remote_code (True, or an allowlist of repository ids).
namespace kernelhub::cli::commands {

// --trust-remote-code (every publisher) and --trust-repo ORG/NAME (repeatable); `scope` ends
// their help ("" or "; ...").
void add_trust_options(CLI::App& sub, loader::RemoteCodeTrust& trust, std::string_view scope = {});

// `message` with a line naming those options when it is the publisher check's refusal.
std::string with_trust_hint(std::string message);

}  // namespace kernelhub::cli::commands
