// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/discussion.hpp>

#include <nlohmann/json.hpp>

namespace kernelhub::hub {

namespace {

using nlohmann::json;

std::string text_at(const json& value, std::initializer_list<const char*> path) {
  const json* at = &value;
  for (const char* key : path) {
    if (!at->is_object()) {
      return "";
    }
    const auto it = at->find(key);
    if (it == at->end()) {
      return "";
    }
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : "";
}

bool flag_at(const json& value, const char* key) {
  if (!value.is_object()) {
    return false;
  }
  const auto it = value.find(key);
  return it != value.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

DiscussionEvent parse_discussion_event(const json& event) {
  DiscussionEvent out;
  out.id = text_at(event, {"id"});
  out.type = text_at(event, {"type"});
  out.author = text_at(event, {"author", "name"});
  out.created_at = text_at(event, {"createdAt"});
  const json no_data = json::object();
  const auto found = event.is_object() ? event.find("data") : event.end();
  const json& data = event.is_object() && found != event.end() ? *found : no_data;
  if (out.type == "comment") {
    out.text = text_at(data, {"latest", "raw"});
    out.hidden = flag_at(data, "hidden");
  } else if (out.type == "commit") {
    out.text = text_at(data, {"subject"});
    out.oid = text_at(data, {"oid"});
  } else if (out.type == "status-change") {
    out.text = text_at(data, {"status"});
  } else if (out.type == "title-change") {
    out.old_title = text_at(data, {"from"});
    out.text = text_at(data, {"to"});
  }
  return out;
}

Discussion parse_discussion(const json& discussion) {
  Discussion out;
  if (!discussion.is_object()) {
    return out;
  }
  if (const auto num = discussion.find("num"); num != discussion.end() && num->is_number_integer()) {
    out.num = num->get<long>();
  }
  out.title = text_at(discussion, {"title"});
  out.status = text_at(discussion, {"status"});
  out.author = text_at(discussion, {"author", "name"});
  out.created_at = text_at(discussion, {"createdAt"});
  out.is_pull_request = flag_at(discussion, "isPullRequest");
  if (const auto changes = discussion.find("changes"); changes != discussion.end() && changes->is_object()) {
    if (auto base = text_at(*changes, {"base"}); !base.empty()) {
      out.target_branch = std::move(base);
    }
    if (auto merged = text_at(*changes, {"mergeCommitId"}); !merged.empty()) {
      out.merge_commit = std::move(merged);
    }
  }
  if (const auto files = discussion.find("filesWithConflicts"); files != discussion.end() && files->is_array()) {
    for (const auto& file : *files) {
      if (file.is_string()) {
        out.conflicting_files.push_back(file.get<std::string>());
      }
    }
  }
  if (const auto diff = discussion.find("diff"); diff != discussion.end() && diff->is_string()) {
    out.diff = diff->get<std::string>();
  }
  if (const auto events = discussion.find("events"); events != discussion.end() && events->is_array()) {
    out.has_details = true;
    for (const auto& event : *events) {
      out.events.push_back(parse_discussion_event(event));
    }
  }
  return out;
}

json to_json(const DiscussionEvent& event) {
  json out = {{"id", event.id}, {"type", event.type}, {"author", event.author},
              {"created_at", event.created_at}};
  if (event.type == "comment") {
    out["content"] = event.text;
    out["hidden"] = event.hidden;
  } else if (event.type == "commit") {
    out["summary"] = event.text;
    out["oid"] = event.oid;
  } else if (event.type == "status-change") {
    out["new_status"] = event.text;
  } else if (event.type == "title-change") {
    out["old_title"] = event.old_title;
    out["new_title"] = event.text;
  }
  return out;
}

json to_json(const Discussion& discussion) {
  json out = {{"num", discussion.num},
              {"title", discussion.title},
              {"status", discussion.status},
              {"author", discussion.author},
              {"created_at", discussion.created_at},
              {"is_pull_request", discussion.is_pull_request}};
  if (discussion.target_branch) {
    out["target_branch"] = *discussion.target_branch;
  }
  if (discussion.merge_commit) {
    out["merge_commit_oid"] = *discussion.merge_commit;
  }
  if (discussion.has_details) {
    out["conflicting_files"] = discussion.conflicting_files;
    json events = json::array();
    for (const auto& event : discussion.events) {
      events.push_back(to_json(event));
    }
    out["events"] = std::move(events);
  }
  if (discussion.diff) {
    out["diff"] = *discussion.diff;
  }
  return out;
}

}  // namespace kernelhub::hub
