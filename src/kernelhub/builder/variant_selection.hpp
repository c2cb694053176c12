// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/util/expected.hpp>

// `kernel-builder build --variant NAME`: narrowing a plan to the variants an author names,
// as the reference's `build --variant` narrows its Nix build to one redistributable variant.
namespace kernelhub::builder {

enum class UnbuildableVariants { fail, skip };

// The names in `available` that `requested` means: itself when listed; else, as a short form,
// every name whose '-'-separated parts include each part of `requested` (case-insensitive),
// a backend naming its versioned part too: "cpu", "cu128", "cuda" (cu128, cu130...), "rocm",
// "xpu", "torch211-cpu". Empty when none matches. Order of `available` kept.
std::vector<std::string> match_variant_name(std::string_view requested,
                                            std::span<const std::string> available);

// The entry of `available` closest to `requested` by edit distance, with no cut-off (the list
// is short and every entry real, so the nearest one is always worth naming); empty when
// `available` is.
std::string closest_variant_name(std::string_view requested,
                                 std::span<const std::string> available);

// `plan` with only the variants named in `names` (plan order kept, a name given twice counts
// once; a short form, see match_variant_name, keeps every variant it matches); an empty
// `names` keeps them all. A name that matches nothing is an error that quotes it, names the
// closest buildable variant and lists every buildable variant, and says
// which backends this machine leaves out and why, since a name from `list-variants --all` may
// be a real variant that only this machine cannot build.
// With UnbuildableVariants::skip, such a name is left out instead, and the error comes only
// when no name matches anything.
util::Expected<MatrixPlan> select_variants(
    MatrixPlan plan, const std::vector<std::string>& names,
    UnbuildableVariants unbuildable = UnbuildableVariants::fail);

}  // namespace kernelhub::builder
