// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repo_id.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace kernelhub::server {

namespace {

constexpr std::size_t k_max_id_length = 96;
constexpr std::size_t k_max_revision_length = 255;
constexpr std::size_t k_max_path_length = 4096;
constexpr std::array<std::string_view, 5> k_reserved_namespaces = {"api", "models", "datasets",
                                                                   "spaces", "kernels"};

bool is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

bool has_control_char(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

}  // namespace

std::string_view api_part(RepoType type) {
  switch (type) {
    case RepoType::model:
      return "models";
    case RepoType::dataset:
      return "datasets";
    case RepoType::kernel:
      return "kernels";
  }
  return "models";
}

std::optional<RepoType> repo_type_from_api_part(std::string_view part) {
  if (part == "models") {
    return RepoType::model;
  }
  if (part == "datasets") {
    return RepoType::dataset;
  }
  if (part == "kernels") {
    return RepoType::kernel;
  }
  return std::nullopt;
}

std::string_view url_prefix(RepoType type) {
  switch (type) {
    case RepoType::model:
      return "";
    case RepoType::dataset:
      return "datasets/";
    case RepoType::kernel:
      return "kernels/";
  }
  return "";
}

std::optional<RepoType> repo_type_from_name(std::string_view name) {
  if (name.empty() || name == "model") {
    return RepoType::model;
  }
  if (name == "dataset") {
    return RepoType::dataset;
  }
  if (name == "kernel") {
    return RepoType::kernel;
  }
  return std::nullopt;
}

bool is_valid_id_part(std::string_view part) {
  if (part.empty() || part.size() > k_max_id_length) {
    return false;
  }
  if (!std::all_of(part.begin(), part.end(), is_id_char)) {
    return false;
  }
  const auto is_edge = [](char c) { return c == '-' || c == '.'; };
  if (is_edge(part.front()) || is_edge(part.back())) {
    return false;
  }
  return part.find("--") == std::string_view::npos && part.find("..") == std::string_view::npos;
}

HubExpected<RepoId> make_repo_id(RepoType type, std::string_view ns, std::string_view name) {
  if (!is_valid_id_part(ns) || !is_valid_id_part(name) ||
      ns.size() + 1 + name.size() > k_max_id_length) {
    return bad_request(fmt::format(
        "invalid repo id \"{}/{}\": use namespace/name with letters, digits, '_', '.' and '-', "
        "at most 96 characters, no '--' or '..'",
        ns, name));
  }
  if (std::find(k_reserved_namespaces.begin(), k_reserved_namespaces.end(), ns) !=
      k_reserved_namespaces.end()) {
    return bad_request(fmt::format("namespace \"{}\" is reserved", ns));
  }
  return RepoId{type, std::string(ns), std::string(name)};
}

HubExpected<void> check_repo_path(std::string_view path) {
  if (path.empty() || path.size() > k_max_path_length) {
    return bad_request(fmt::format("invalid path \"{}\": empty or too long", path));
  }
  if (path.find('\0') != std::string_view::npos || has_control_char(path)) {
    return bad_request("invalid path: control characters are not allowed");
  }
  if (path.front() == '/') {
    return bad_request(fmt::format("invalid path \"{}\": must be relative", path));
  }
  // A backslash is a separator on Windows clients and in some unpackers: "..\\x" would
  // escape the folder it is written to there, so the name is refused like the Hub does.
  if (path.find('\\') != std::string_view::npos) {
    return bad_request(fmt::format("invalid path \"{}\": backslashes are not allowed", path));
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return bad_request(
          fmt::format("invalid path \"{}\": empty, '.' and '..' parts are not allowed", path));
    }
    if (part == ".git") {
      return bad_request(fmt::format("invalid path \"{}\": '.git' is reserved", path));
    }
    start = end + 1;
  }
  return {};
}

HubExpected<void> check_revision(std::string_view revision) {
  if (revision.empty() || revision.size() > k_max_revision_length) {
    return bad_request("invalid revision: empty or longer than 255 bytes");
  }
  if (has_control_char(revision)) {
    return bad_request("invalid revision: control characters are not allowed");
  }
  return {};
}

}  // namespace kernelhub::server
