// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/http_message.hpp>

namespace kernelhub::server {

namespace {

std::string header_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20 || byte >= 0x7f ? '?' : c);
  }
  return out;
}

}  // namespace

std::optional<std::string_view> HttpRequest::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) {
      return std::string_view(value);
    }
  }
  return std::nullopt;
}

void HttpResponse::set_header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
}

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  // Replace invalid UTF-8 rather than throw: names come from clients.
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

HttpResponse error_response(const HubError& error) {
  HttpResponse response = json_response(error.status, {{"error", error.message}});
  if (!error.code.empty()) {
    response.set_header("X-Error-Code", error.code);
  }
  response.set_header("X-Error-Message", header_safe(error.message));
  return response;
}

}  // namespace kernelhub::server
