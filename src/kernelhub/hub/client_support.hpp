// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/hub/hub_types.hpp>

// Helpers shared by the hub_client*.cpp files; not part of the layer's API.
namespace kernelhub::hub::detail {

// A HubError for a status >= 400, nothing otherwise.
HubResult<HttpResponse> require_success(HttpResponse response, std::string_view what);
// The body as JSON; a 2xx that is not JSON is an invalid_response.
HubResult<nlohmann::json> json_body(const HttpResponse& response, std::string_view what);
// `value[key]` as a string, or "" when absent or not a string.
std::string string_field(const nlohmann::json& value, std::string_view key);

}  // namespace kernelhub::hub::detail
