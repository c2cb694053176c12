// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/error_mapping.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <fmt/format.h>

namespace kernelhub::hub {

namespace {

// The server's words: X-Error-Message, then `error` (a string or a list) and `errors[].message`
// from a JSON body, de-duplicated.
std::string server_message(const HttpResponse& response) {
  std::vector<std::string> parts;
  auto add = [&parts](std::string text) {
    if (!text.empty() && std::find(parts.begin(), parts.end(), text) == parts.end()) {
      parts.push_back(std::move(text));
    }
  };
  if (auto header = response.headers.get("X-Error-Message")) {
    add(*header);
  }
  const auto body = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object()) {
    if (auto it = body.find("error"); it != body.end()) {
      if (it->is_string()) {
        add(it->get<std::string>());
      } else if (it->is_array()) {
        for (const auto& item : *it) {
          if (item.is_string()) {
            add(item.get<std::string>());
          }
        }
      }
    }
    if (auto it = body.find("errors"); it != body.end() && it->is_array()) {
      for (const auto& item : *it) {
        if (item.is_object() && item.contains("message") && item["message"].is_string()) {
          add(item["message"].get<std::string>());
        }
      }
    }
  }
  std::string joined;
  for (const auto& part : parts) {
    joined += joined.empty() ? part : "; " + part;
  }
  return joined;
}

ErrorKind kind_of(long status, const std::optional<std::string>& code,
                  const std::string& message) {
  if (code == "RevisionNotFound") {
    return ErrorKind::revision_not_found;
  }
  if (code == "EntryNotFound") {
    return ErrorKind::entry_not_found;
  }
  if (code == "GatedRepo") {
    return ErrorKind::gated_repo;
  }
  if (message == "Access to this resource is disabled.") {
    return ErrorKind::forbidden;
  }
  if (code == "RepoNotFound") {
    return ErrorKind::repo_not_found;
  }
  switch (status) {
    case 400: return ErrorKind::bad_request;
    case 401: return ErrorKind::unauthorized;
    case 403: return ErrorKind::forbidden;
    case 409: return ErrorKind::conflict;
    case 412: return ErrorKind::precondition_failed;
    default: return ErrorKind::http_status;
  }
}

}  // namespace

HubError error_from_response(const HttpResponse& response, std::string_view what) {
  HubError error;
  const auto code = response.headers.get("X-Error-Code");
  const auto detail = server_message(response);
  error.kind = kind_of(response.status, code, response.headers.get("X-Error-Message").value_or(""));
  error.status = response.status;
  error.repo_commit = response.headers.get("X-Repo-Commit");
  error.body = response.body;
  std::string label;
  switch (error.kind) {
    case ErrorKind::repo_not_found: label = "repository not found"; break;
    case ErrorKind::gated_repo: label = "gated repository"; break;
    case ErrorKind::revision_not_found: label = "revision not found"; break;
    case ErrorKind::entry_not_found: label = "file not found"; break;
    case ErrorKind::unauthorized: label = "unauthorized (check HF_TOKEN)"; break;
    default: label = fmt::format("HTTP {}", response.status); break;
  }
  error.message = detail.empty() ? fmt::format("{}: {}", what, label)
                                 : fmt::format("{}: {}: {}", what, label, detail);
  return error;
}

}  // namespace kernelhub::hub
