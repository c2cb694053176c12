// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::metadata {

// Reads metadata.json text, accepting what the reference's kernels-data accepts (HEAD schema:
// kernel-depends and provenance included) and rejecting the rest. Every problem is reported to
// `sink` as "<json path>: <problem>" under `file_name`; nullopt when there was any.
//
// Known difference: serde also reads a struct from a JSON array of its fields in declaration
// order; no writer produces that, and it is rejected here.
std::optional<Metadata> read_metadata(std::string_view text, const std::string& file_name,
                                      util::DiagnosticSink& sink);

// The same, with every problem joined into one error message, one per line.
util::Expected<Metadata> parse_metadata(std::string_view text,
                                        const std::string& file_name = "metadata.json");
util::Expected<Metadata> read_metadata_file(const std::filesystem::path& path);

}  // namespace kernelhub::metadata
