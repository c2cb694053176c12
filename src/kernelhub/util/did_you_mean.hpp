// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kernelhub::util {

// Optimal-string-alignment edit distance (adjacent transpositions count as one edit), on
// ASCII-lowercased input: the usual "cudaa"/"cdua" typos are distance 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo: at most a
// third of the word's length in edits (at least 1), as ninja's spell checker does.
std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates);

// "did you mean \"x\"?" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace kernelhub::util
