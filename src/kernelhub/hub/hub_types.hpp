// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <kernelhub/util/expected.hpp>

// The vocabulary of the Hub protocol (hub-api.md §1): repo types, repo ids, revisions and the
// error kinds the server signals with X-Error-Code.
namespace kernelhub::hub {

enum class RepoType { model, dataset, space, kernel };

// "model", "dataset", "space", "kernel" (the spelling of `repo_type=` in huggingface_hub).
std::string_view repo_type_name(RepoType type);
std::optional<RepoType> parse_repo_type(std::string_view name);
// The API part: `/api/{models|datasets|spaces|kernels}/...`.
std::string_view repo_type_api_part(RepoType type);
// The file-URL prefix: "" for models, else "datasets/", "spaces/", "kernels/".
std::string_view repo_type_url_prefix(RepoType type);
// The cache folder prefix without the dashes: "models", "datasets", "spaces", "kernels".
std::string_view repo_type_cache_part(RepoType type);

// A validated `name` or `namespace/name` (hub-api.md §1.1): [\w.-], at most 96 characters
// per part, no leading or trailing `-`/`.`, no `--` or `..`.
class RepoId {
public:
  static util::Expected<RepoId> parse(std::string_view text);

  const std::string& str() const { return m_text; }
  // Empty for a single-segment id.
  std::string_view owner() const;
  std::string_view name() const;
  // `models--org--name`-style folder name (without the type part): "org--name".
  std::string folder_part() const;

  friend bool operator==(const RepoId&, const RepoId&) = default;

private:
  explicit RepoId(std::string text) : m_text(std::move(text)) {}
  std::string m_text;
};

struct RepoRef {
  RepoId id;
  RepoType type = RepoType::kernel;
};

// True for a revision the Hub client treats as a commit: exactly 40 lowercase hex digits.
bool is_commit_sha(std::string_view revision);

// What went wrong, from X-Error-Code first, then the status (hub-api.md §1.4).
enum class ErrorKind {
  offline,             // HF_HUB_OFFLINE: no request was made
  network,             // connection, DNS, TLS or timeout failure (after retries)
  unauthorized,        // 401 without a repo code (bad or missing token)
  forbidden,           // 403 without a code
  repo_not_found,      // X-Error-Code RepoNotFound (401/404)
  gated_repo,          // X-Error-Code GatedRepo
  revision_not_found,  // X-Error-Code RevisionNotFound
  entry_not_found,     // X-Error-Code EntryNotFound
  bad_request,         // 400
  conflict,            // 409 (create repo/branch/tag that exists)
  precondition_failed, // 412 (stale parent commit)
  http_status,         // any other status >= 400
  invalid_response,    // a 2xx whose headers or body do not have the required fields
  checksum,            // downloaded bytes do not match the ETag or the expected size
  io,                  // local file error
  invalid_argument,    // bad repo id, path or revision given by the caller
};

std::string_view error_kind_name(ErrorKind kind);

// A Hub failure. It derives from util::Error so that KH_TRY in util::Expected code passes the
// message on; hub code keeps the kind to decide (e.g. the cache falls back on network errors).
struct HubError : util::Error {
  ErrorKind kind = ErrorKind::http_status;
  long status = 0;                         // HTTP status, 0 when no response
  std::optional<std::string> repo_commit;  // X-Repo-Commit of an error response, if any
  std::string body;                        // response body (for 409 create-repo `url`)
};

template <typename T>
using HubResult = tl::expected<T, HubError>;

inline tl::unexpected<HubError> hub_fail(ErrorKind kind, std::string message, long status = 0) {
  HubError error;
  error.message = std::move(message);
  error.kind = kind;
  error.status = status;
  return tl::unexpected<HubError>(std::move(error));
}

// Two-value enums instead of bool parameters (STYLE.md).
enum class Recursive { no, yes };
enum class ExistOk { no, yes };
enum class Visibility { public_repo, private_repo };
enum class CreatePr { no, yes };

}  // namespace kernelhub::hub

// KH_HUB_TRY(expr): KH_TRY for HubResult, so the error kind travels up with the message.
#define KH_HUB_TRY(expr)                                          \
  __extension__({                                                 \
    auto kh_hub_try_result_ = (expr);                             \
    if (!kh_hub_try_result_) {                                    \
      return tl::unexpected<::kernelhub::hub::HubError>(          \
          std::move(kh_hub_try_result_).error());                 \
    }                                                             \
    std::move(kh_hub_try_result_).value();                        \
  })
