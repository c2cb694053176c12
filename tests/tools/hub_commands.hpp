// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// kernelhub-testtool's Hub client subcommand, for tests/e2e/test_hub_client.py. The endpoint,
// token and offline mode come from the environment (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE).
namespace kernelhub::testtool {

// hub OP ARGS... [--type kernel|model]:
//   refs REPO | info REPO [REV] | tree REPO REV [PATH] [--recursive] | metadata REPO REV PATH
//   | download REPO REV DEST_DIR PATH... (in parallel, into DEST_DIR/PATH)
// Output: {"ok": true, ...} or {"ok": false, "kind", "error"}.
nlohmann::json hub_call(const std::vector<std::string>& args);

}  // namespace kernelhub::testtool
