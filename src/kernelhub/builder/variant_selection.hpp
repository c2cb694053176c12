// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/util/expected.hpp>

// `kernel-builder build --variant NAME`: narrowing a plan to the variants an author names,
// as the reference's `build --variant` narrows its Nix build to one redistributable variant.
namespace kernelhub::builder {

// `plan` with only the variants named in `names` (plan order kept, a name given twice counts
// once); an empty `names` keeps them all. A name the plan does not hold is an error that
// quotes it, suggests the closest buildable name and lists every buildable variant, and says
// which backends this machine leaves out and why, since a name from `list-variants --all` may
// be a real variant that only this machine cannot build.
util::Expected<MatrixPlan> select_variants(MatrixPlan plan, const std::vector<std::string>& names);

}  // namespace kernelhub::builder
