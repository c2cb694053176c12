// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/discussion_store.hpp>

#include <ctime>
#include <optional>
#include <random>

#include <fmt/format.h>

#include <kernelhub/server/hub_timestamp.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::server {

namespace {

using nlohmann::json;

constexpr int k_format_version = 1;

// The Hub's event ids are 24 hex digits; huggingface_hub lower-cases them in edit URLs.
std::string new_event_id() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{:016x}{:08x}", random(), static_cast<std::uint32_t>(random()));
}

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// What every reader of the list relies on, checked once at load: the handlers and pages read
// these members without checking each (a const json's operator[] on a missing key is
// undefined), so a hand-edited or truncated file must be refused here, not crash a reader.
std::optional<std::string> shape_error(const json& discussion) {
  if (!discussion.is_object()) {
    return "is not an object";
  }
  const auto num = discussion.find("num");
  if (num == discussion.end() || !num->is_number_integer() || num->get<long>() <= 0) {
    return "has no positive integer \"num\"";
  }
  for (const char* key : {"title", "status", "createdAt", "base", "mergeCommitId"}) {
    if (const auto it = discussion.find(key); it != discussion.end() && !it->is_string()) {
      return fmt::format("has a \"{}\" that is not a string", key);
    }
  }
  if (const auto it = discussion.find("isPullRequest");
      it != discussion.end() && !it->is_boolean()) {
    return "has an \"isPullRequest\" that is not a boolean";
  }
  const auto author = discussion.find("author");
  if (author == discussion.end() || !author->is_object()) {
    return "has no \"author\" object";
  }
  const auto events = discussion.find("events");
  if (events == discussion.end() || !events->is_array()) {
    return "has no \"events\" list";
  }
  for (const auto& event : *events) {
    const auto data = event.is_object() ? event.find("data") : event.end();
    if (!event.is_object() || (data != event.end() && !data->is_object())) {
      return "has an event that is not an object with a \"data\" object";
    }
  }
  return std::nullopt;
}

json author_of(std::string_view name) { return {{"name", name}, {"type", "user"}}; }

json event(std::string_view type, std::string_view author, json data) {
  return {{"id", new_event_id()},
          {"type", type},
          {"createdAt", now_iso()},
          {"author", author_of(author)},
          {"data", std::move(data)}};
}

json comment_body(std::string_view text, std::string_view author) {
  return {{"raw", text},
          {"html", fmt::format("<p>{}</p>", escape_html(text))},
          {"updatedAt", now_iso()},
          {"author", author_of(author)}};
}

}  // namespace

std::string now_iso() {
  return hub_timestamp(std::time(nullptr));
}

DiscussionStore::DiscussionStore(const std::filesystem::path& repo_dir)
    : m_path(repo_dir / "discussions.json") {}

std::string DiscussionStore::shown_path() const {
  // Relative to the server's root (<repo>.git/discussions.json): the message reaches anonymous
  // readers of public repos, who must not learn where the operator keeps the data.
  return (m_path.parent_path().filename() / m_path.filename()).string();
}

HubExpected<json> DiscussionStore::load() const {
  std::error_code ec;
  if (!std::filesystem::exists(m_path, ec)) {
    return json{{"version", k_format_version}, {"discussions", json::array()}};
  }
  const auto text = util::read_file(m_path);
  if (!text) {
    return hub_fail(500, "", fmt::format("cannot read the discussions: {}", text.error().message));
  }
  json all = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!all.is_object() || !all.contains("discussions") || !all["discussions"].is_array()) {
    return hub_fail(500, "", fmt::format("\"{}\" is damaged: expected {{\"discussions\": [...]}}",
                                         shown_path()));
  }
  std::size_t index = 0;
  for (const auto& discussion : all["discussions"]) {
    if (const auto problem = shape_error(discussion)) {
      return hub_fail(500, "", fmt::format("\"{}\" is damaged: entry {} of \"discussions\" {}",
                                           shown_path(), index + 1, *problem));
    }
    ++index;
  }
  return all;
}

HubExpected<void> DiscussionStore::save(const json& all) const {
  const auto written = util::write_file_atomic(m_path, all.dump(1));
  if (!written) {
    return hub_fail(500, "", fmt::format("cannot save the discussions: {}",
                                         written.error().message));
  }
  return {};
}

json* find_discussion(json& all, long num) {
  for (auto& discussion : all["discussions"]) {
    if (discussion.value("num", 0L) == num) {
      return &discussion;
    }
  }
  return nullptr;
}

long next_discussion_number(const json& all) {
  long highest = 0;
  for (const auto& discussion : all["discussions"]) {
    highest = std::max(highest, discussion.value("num", 0L));
  }
  return highest + 1;
}

json new_discussion(long num, std::string_view title, std::string_view author,
                    const std::optional<std::string>& base_ref) {
  json discussion = {{"num", num},
                     {"title", title},
                     {"status", base_ref ? "draft" : "open"},
                     {"isPullRequest", base_ref.has_value()},
                     {"createdAt", now_iso()},
                     {"author", author_of(author)},
                     {"events", json::array()}};
  if (base_ref) {
    discussion["base"] = *base_ref;
  }
  return discussion;
}

json comment_event(std::string_view text, std::string_view author) {
  return event("comment", author,
               {{"edited", false},
                {"hidden", false},
                {"numEdits", 0},
                {"latest", comment_body(text, author)},
                {"history", json::array()}});
}

json status_event(std::string_view status, std::string_view author) {
  return event("status-change", author, {{"status", status}});
}

json commit_event(std::string_view subject, std::string_view oid, std::string_view author) {
  return event("commit", author, {{"subject", subject}, {"oid", oid}});
}

json title_event(std::string_view from, std::string_view to, std::string_view author) {
  return event("title-change", author, {{"from", from}, {"to", to}});
}

void edit_comment(json& event, std::string_view text, std::string_view author) {
  json& data = event["data"];
  data["history"].push_back(data["latest"]);
  data["latest"] = comment_body(text, author);
  data["edited"] = true;
  data["numEdits"] = data.value("numEdits", 0) + 1;
}

void hide_comment(json& event, std::string_view author) {
  json& data = event["data"];
  data["hidden"] = true;
  data["latest"] = comment_body("This comment has been hidden", author);
  data["history"] = json::array();
}

}  // namespace kernelhub::server
