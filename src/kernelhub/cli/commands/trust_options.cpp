// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/trust_options.hpp>

#include <fmt/format.h>

namespace kernelhub::cli::commands {

void add_trust_options(CLI::App& sub, loader::RemoteCodeTrust& trust, std::string_view scope) {
  sub.add_flag("--trust-remote-code", trust.all,
               fmt::format("accept kernels of any publisher, as trust_remote_code=True does (by "
                           "default each kernel's organization must be a trusted kernel "
                           "publisher){}",
                           scope));
  sub.add_option("--trust-repo", trust.repo_ids,
                 fmt::format("accept this kernel even if its publisher is not trusted, as the "
                             "trust_remote_code allowlist does (repeatable){}",
                             scope))
      ->type_name("ORG/NAME");
}

std::string with_trust_hint(std::string message) {
  if (message.find("is not from a trusted publisher") != std::string::npos ||
      message.find("could not verify publisher trust status") != std::string::npos) {
    message +=
        "\nhint: pass --trust-repo ORG/NAME to trust this kernel, or --trust-remote-code to "
        "trust every publisher";
  }
  return message;
}

}  // namespace kernelhub::cli::commands
