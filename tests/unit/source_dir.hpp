// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>

// The checkout the unit tests were built from, for the tests that read its files (templates,
// vendored test data). Defined in source_dir.cpp alone: a path compiled into a unity batch made
// that batch's compile specific to the checkout's folder, so a clone elsewhere missed ccache.
namespace kernelhub::unit_tests {

std::filesystem::path source_dir();

}  // namespace kernelhub::unit_tests
