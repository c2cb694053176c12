// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/hub/hub_types.hpp>

// Turns an HTTP error response into a HubError as huggingface_hub's hf_raise_for_status does
// (hub-api.md §1.4): X-Error-Code first, then the status. The message joins X-Error-Message
// and the body's `error`/`errors` fields.
namespace kernelhub::hub {

// `what` names the request for the message ("repo info for kernels/org/name").
HubError error_from_response(const HttpResponse& response, std::string_view what);

}  // namespace kernelhub::hub
