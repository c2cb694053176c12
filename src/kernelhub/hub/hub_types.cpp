// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_types.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace kernelhub::hub {

namespace {

struct RepoTypeNames {
  RepoType type;
  std::string_view name;
  std::string_view api;
  std::string_view prefix;
};

constexpr std::array k_repo_types = {
    RepoTypeNames{RepoType::model, "model", "models", ""},
    RepoTypeNames{RepoType::dataset, "dataset", "datasets", "datasets/"},
    RepoTypeNames{RepoType::space, "space", "spaces", "spaces/"},
    RepoTypeNames{RepoType::kernel, "kernel", "kernels", "kernels/"},
};

const RepoTypeNames& names_of(RepoType type) {
  return *std::find_if(k_repo_types.begin(), k_repo_types.end(),
                       [type](const RepoTypeNames& n) { return n.type == type; });
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One part of a repo id: [\w.-]+ starting and ending with a word character (the reference's
// `\b...\b`), without `--` or `..`.
std::optional<std::string> part_problem(std::string_view part, std::size_t max_length) {
  if (part.empty()) {
    return "an empty part";
  }
  if (part.size() > max_length) {
    return fmt::format("more than {} characters", max_length);
  }
  for (char c : part) {
    if (!is_word_char(c) && c != '-' && c != '.') {
      return fmt::format("the character '{}'", c);
    }
  }
  if (!is_word_char(part.front()) || !is_word_char(part.back())) {
    return "a leading or trailing '-' or '.'";
  }
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos) {
    return "'--' or '..'";
  }
  return std::nullopt;
}

}  // namespace

std::string_view repo_type_name(RepoType type) { return names_of(type).name; }
std::string_view repo_type_api_part(RepoType type) { return names_of(type).api; }
std::string_view repo_type_url_prefix(RepoType type) { return names_of(type).prefix; }
std::string_view repo_type_cache_part(RepoType type) { return names_of(type).api; }

std::optional<RepoType> parse_repo_type(std::string_view name) {
  for (const auto& entry : k_repo_types) {
    if (entry.name == name || entry.api == name) {
      return entry.type;
    }
  }
  return std::nullopt;
}

util::Expected<RepoId> RepoId::parse(std::string_view text) {
  const auto slash = text.find('/');
  std::optional<std::string> problem;
  if (slash != std::string_view::npos && text.find('/', slash + 1) != std::string_view::npos) {
    problem = "more than one '/'";
  } else if (slash != std::string_view::npos) {
    problem = part_problem(text.substr(0, slash), 96);
    if (!problem) {
      problem = part_problem(text.substr(slash + 1), 96);
    }
  } else {
    problem = part_problem(text, 96);
  }
  if (problem) {
    return util::fail(fmt::format(
        "invalid repo id \"{}\": it has {}; use `name` or `namespace/name` with letters, digits, "
        "'_', '-' and '.'",
        text, *problem));
  }
  return RepoId(std::string(text));
}

std::string_view RepoId::owner() const {
  const auto slash = m_text.find('/');
  return slash == std::string::npos ? std::string_view{}
                                    : std::string_view(m_text).substr(0, slash);
}

std::string_view RepoId::name() const {
  const auto slash = m_text.find('/');
  return slash == std::string::npos ? std::string_view(m_text)
                                    : std::string_view(m_text).substr(slash + 1);
}

std::string RepoId::folder_part() const {
  std::string folder = m_text;
  const auto slash = folder.find('/');
  if (slash != std::string::npos) {
    folder.replace(slash, 1, "--");
  }
  return folder;
}

bool is_commit_sha(std::string_view revision) {
  return revision.size() == 40 && std::all_of(revision.begin(), revision.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::offline: return "offline";
    case ErrorKind::network: return "network";
    case ErrorKind::unauthorized: return "unauthorized";
    case ErrorKind::forbidden: return "forbidden";
    case ErrorKind::repo_not_found: return "repo_not_found";
    case ErrorKind::gated_repo: return "gated_repo";
    case ErrorKind::revision_not_found: return "revision_not_found";
    case ErrorKind::entry_not_found: return "entry_not_found";
    case ErrorKind::bad_request: return "bad_request";
    case ErrorKind::conflict: return "conflict";
    case ErrorKind::precondition_failed: return "precondition_failed";
    case ErrorKind::http_status: return "http_status";
    case ErrorKind::invalid_response: return "invalid_response";
    case ErrorKind::checksum: return "checksum";
    case ErrorKind::io: return "io";
    case ErrorKind::invalid_argument: return "invalid_argument";
  }
  return "unknown";
}

}  // namespace kernelhub::hub
