// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/metadata/metadata.hpp>

namespace kernelhub::builder {

// The metadata.json of one variant (builder.md §3), without its digest: general fields,
// python-depends and kernel-depends of `backend`, backend archs for noarch cuda (cuda-
// capabilities) and rocm (rocm-archs), provenance of the builder and, from git, the kernel.
metadata::Metadata variant_metadata(const config::BuildConfig& config, types::Backend backend,
                                    const std::string& id,
                                    const std::optional<metadata::GitStatus>& kernel_git,
                                    const std::string& builder_version);

}  // namespace kernelhub::builder
