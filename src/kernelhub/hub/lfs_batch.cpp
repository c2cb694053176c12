// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/lfs_batch.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <strings.h>
#include <fmt/ranges.h>

#include <kernelhub/hub/endpoint.hpp>

namespace kernelhub::hub {

namespace {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// An integer JSON value that fits a uint64 (Python's isinstance(x, int), negatives refused).
std::optional<std::uint64_t> unsigned_value(const json& value) {
  if (value.is_number_unsigned()) {
    return value.get<std::uint64_t>();
  }
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  return std::nullopt;
}

HubResult<std::optional<LfsAction>> parse_action(const json& actions, std::string_view name,
                                                 std::string_view what) {
  const auto it = actions.find(name);
  if (it == actions.end() || it->is_null()) {
    return std::optional<LfsAction>();
  }
  const auto href = it->is_object() ? it->find("href") : it->end();
  const auto header = it->is_object() ? it->find("header") : it->end();
  if (href == it->end() || !href->is_string() ||
      (header != it->end() && !header->is_null() && !header->is_object())) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: the `{}` action needs a string `href` and an object `header`",
                                what, name));
  }
  LfsAction action;
  action.href = href->get<std::string>();
  if (header != it->end() && header->is_object()) {
    action.header = *header;
  }
  return std::optional<LfsAction>(std::move(action));
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `chunk_size` may come as a number or as its decimal text (lfs.py applies int() to it).
HubResult<std::uint64_t> chunk_size_of(const json& value, std::string_view what) {
  std::optional<std::uint64_t> size = unsigned_value(value);
  if (!size && value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (all_digits(text) && text.size() <= 18) {
      size = std::stoull(text);
    }
  }
  if (!size || *size == 0) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: `chunk_size` should be a positive integer, got {}", what, value.dump()));
  }
  return *size;
}

// A header's value as HTTP header text; refuses what cannot be one (a CR or LF would let the
// server add headers of its choosing to a request to another host).
HubResult<std::string> header_text(const std::string& name, const json& value, std::string_view what) {
  std::string text = value.is_string() ? value.get<std::string>() : value.is_number() ? value.dump() : std::string();
  const bool bad_name = name.empty() || name.find_first_of(":\r\n \t") != std::string::npos;
  if (bad_name || (!value.is_string() && !value.is_number()) || text.find_first_of("\r\n") != std::string::npos) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: the upload action's header \"{}\" is not a valid HTTP header", what, name));
  }
  return text;
}

}  // namespace

std::string lfs_batch_url(std::string_view endpoint, const RepoRef& repo) {
  return fmt::format("{}/{}{}.git/info/lfs/objects/batch", endpoint, repo_type_url_prefix(repo.type),
                     repo.id.str());
}

const std::vector<std::string>& lfs_upload_transfers() {
  static const std::vector<std::string> transfers{"basic", "multipart"};
  return transfers;
}

std::string lfs_upload_batch_body(const std::vector<LfsObjectId>& objects, std::string_view revision) {
  ordered_json list = ordered_json::array();
  for (const auto& object : objects) {
    list.push_back(ordered_json{{"oid", object.oid}, {"size", object.size}});
  }
  // Field order as lfs.py's payload dict; `ref` only when a revision is given.
  ordered_json body{{"operation", "upload"},
                    {"transfers", lfs_upload_transfers()},
                    {"objects", std::move(list)},
                    {"hash_algo", "sha256"}};
  if (!revision.empty()) {
    body["ref"] = ordered_json{{"name", std::string(revision)}};
  }
  return body.dump();
}

HubResult<LfsBatchAnswer> parse_lfs_batch_answer(std::string_view body, std::string_view what) {
  const auto answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto objects = answer.is_object() ? answer.find("objects") : answer.end();
  if (objects == answer.end() || !objects->is_array()) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: the answer has no `objects` list", what));
  }
  LfsBatchAnswer result;
  if (const auto transfer = answer.find("transfer"); transfer != answer.end() && transfer->is_string()) {
    result.transfer = transfer->get<std::string>();
  }
  for (const auto& item : *objects) {
    const auto oid = item.is_object() ? item.find("oid") : item.end();
    const auto size = item.is_object() ? item.find("size") : item.end();
    if (oid == item.end() || !oid->is_string() || size == item.end() || !unsigned_value(*size)) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: an object without a string `oid` and an integer `size`", what));
    }
    LfsObjectAnswer object;
    object.oid = oid->get<std::string>();
    object.size = *unsigned_value(*size);
    if (const auto error = item.find("error"); error != item.end()) {
      const auto code = error->is_object() ? error->find("code") : error->end();
      const auto message = error->is_object() ? error->find("message") : error->end();
      if (code == error->end() || !code->is_number_integer() || message == error->end() || !message->is_string()) {
        return hub_fail(ErrorKind::invalid_response,
                        fmt::format("{}: the error of object {} needs an integer `code` and a string `message`",
                                    what, object.oid));
      }
      object.error = std::make_pair(code->get<long>(), message->get<std::string>());
    } else if (const auto actions = item.find("actions"); actions != item.end() && !actions->is_null()) {
      if (!actions->is_object()) {
        return hub_fail(ErrorKind::invalid_response,
                        fmt::format("{}: the `actions` of object {} are not an object", what, object.oid));
      }
      object.upload = KH_HUB_TRY(parse_action(*actions, "upload", what));
      object.verify = KH_HUB_TRY(parse_action(*actions, "verify", what));
    }
    result.objects.push_back(std::move(object));
  }
  return result;
}

HubResult<LfsUploadPlan> plan_lfs_upload(const LfsBatchAnswer& answer, const LfsObjectAnswer& object,
                                         const LfsObjectId& local, std::string_view endpoint) {
  const auto what = fmt::format("the LFS batch answer for {}", local.oid);
  const auto& asked = lfs_upload_transfers();
  if (!answer.transfer.empty() && std::find(asked.begin(), asked.end(), answer.transfer) == asked.end()) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: the server chose the transfer \"{}\", which was not asked for "
                                "(only {})",
                                what, answer.transfer, fmt::join(asked, ", ")));
  }
  if (object.size != local.size) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: the server answered for {} bytes, the file has {}", what,
                                object.size, local.size));
  }
  LfsUploadPlan plan;
  if (!object.upload) {
    return plan;  // already stored
  }
  plan.href = fix_hub_endpoint_in_url(object.upload->href, endpoint);
  if (object.verify) {
    plan.verify = object.verify;
    plan.verify->href = fix_hub_endpoint_in_url(object.verify->href, endpoint);
  }
  const auto& header = object.upload->header;
  const auto chunk_size = header.find("chunk_size");
  if (chunk_size == header.end()) {
    plan.transfer = LfsUploadPlan::Transfer::basic;
    for (const auto& [name, value] : header.items()) {
      auto text = KH_HUB_TRY(header_text(name, value, what));
      // The body's framing is the transport's: a server's Content-Length or Transfer-Encoding
      // would contradict the bytes actually sent.
      if (strcasecmp(name.c_str(), "Content-Length") != 0 && strcasecmp(name.c_str(), "Transfer-Encoding") != 0) {
        plan.headers.emplace_back(name, std::move(text));
      }
    }
    return plan;
  }
  plan.transfer = LfsUploadPlan::Transfer::multipart;
  plan.chunk_size = KH_HUB_TRY(chunk_size_of(*chunk_size, what));
  // The part URLs are the values under all-digit keys, in the keys' numeric order
  // (lfs.py: _get_sorted_parts_urls); every other key ("chunk_size") is not a part.
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  for (const auto& [key, value] : header.items()) {
    if (!all_digits(key)) {
      continue;
    }
    if (key.size() > 18 || !value.is_string()) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: part \"{}\" has no URL", what, key));
    }
    parts.emplace_back(std::stoull(key), value.get<std::string>());
  }
  std::sort(parts.begin(), parts.end());
  const std::uint64_t expected = (local.size + plan.chunk_size - 1) / plan.chunk_size;
  if (parts.size() != expected) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: {} part URLs for {} bytes in chunks of {} (expected {})", what,
                                parts.size(), local.size, plan.chunk_size, expected));
  }
  for (auto& part : parts) {
    plan.part_urls.push_back(std::move(part.second));
  }
  return plan;
}

std::string lfs_completion_body(std::string_view oid, const std::vector<std::string>& etags) {
  ordered_json parts = ordered_json::array();
  for (std::size_t i = 0; i < etags.size(); ++i) {
    parts.push_back(ordered_json{{"partNumber", i + 1}, {"etag", etags[i]}});
  }
  return ordered_json{{"oid", std::string(oid)}, {"parts", std::move(parts)}}.dump();
}

std::string lfs_verify_body(const LfsObjectId& object) {
  return ordered_json{{"oid", object.oid}, {"size", object.size}}.dump();
}

std::string fix_hub_endpoint_in_url(std::string_view url, std::string_view endpoint) {
  constexpr std::array<std::string_view, 2> k_hub_hosts{k_default_endpoint, "https://hub-ci.huggingface.co"};
  if (std::find(k_hub_hosts.begin(), k_hub_hosts.end(), endpoint) != k_hub_hosts.end()) {
    return std::string(url);
  }
  for (const auto host : k_hub_hosts) {
    // Only the URL's own origin is replaced: Python's str.replace would also rewrite the host's
    // text inside a query string.
    if (url.starts_with(host) && (url.size() == host.size() || url[host.size()] == '/')) {
      return std::string(endpoint) + std::string(url.substr(host.size()));
    }
  }
  return std::string(url);
}

}  // namespace kernelhub::hub
