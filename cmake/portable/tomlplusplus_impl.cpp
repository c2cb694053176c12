// SPDX-License-Identifier: Apache-2.0
// toml++'s implementation, compiled once for the portable build (cmake/PortableBuild.cmake),
// which links no shared libtomlplusplus.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
