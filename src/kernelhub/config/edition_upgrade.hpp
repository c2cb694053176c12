// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>

// `kernel-builder update-build`: rewrites a build.toml of any edition as edition 5.
//
// The reference re-serialises the whole file and so drops comments and key order. Here the
// source text is edited at the positions toml++ records on every node: an edition-4 file gains
// one `edition = 5` line and is otherwise byte-identical. Only when the old shape cannot be
// edited into the new one is the file re-serialised (build_toml_writer.hpp), with a warning.
// Either way the result is checked: it must read back as edition 5 with the same model that
// the reader's in-memory upgrade gives for the original.
namespace kernelhub::config {

enum class UpgradeMethod {
  unchanged,  // already edition 5: the text is returned as is
  edited,     // the original text with keys and tables inserted, renamed or removed
  rewritten,  // re-serialised from the model: comments and layout are lost
};

struct BuildTomlUpgrade {
  std::string text;
  int source_edition = 5;
  UpgradeMethod method = UpgradeMethod::unchanged;
};

struct UpgradeOptions {
  // Written as `general.license` when the file has none (editions 1-3 may lack it, edition 5
  // requires it). Without it such a file is an error, as in the reference.
  std::optional<std::string> license;
  // Re-serialise in the writer's canonical layout even when the text could be edited (and
  // even at edition 5): a formatter, at the price of the file's comments.
  bool canonical = false;
};

// Problems (syntax errors, a missing license, anything the reader rejects) go to `sink` with
// their location; the error value then only summarises them.
util::Expected<BuildTomlUpgrade> upgrade_build_toml_text(std::string_view text,
                                                         const std::string& file_name,
                                                         util::DiagnosticSink& sink,
                                                         const UpgradeOptions& options = {});

// The edition-5 text alone.
util::Expected<std::string> upgrade_build_toml(std::string_view text, const std::string& file_name,
                                               util::DiagnosticSink& sink,
                                               const UpgradeOptions& options = {});

}  // namespace kernelhub::config
