// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/hub/hub_types.hpp>

// The Git LFS batch API for uploads, as huggingface_hub 2.4.0 speaks it to huggingface.co
// (lfs.py: post_lfs_batch_info, lfs_upload, _upload_multi_part, _get_completion_payload) and as
// the public spec describes it (git-lfs docs/api/batch.md and basic-transfers.md). Pure
// functions over request and answer text; HubClient::upload_lfs_files sends them.
namespace kernelhub::hub {

// An LFS object: the sha256 of the file (lowercase hex, the batch API's `oid`) and its size.
struct LfsObjectId {
  std::string oid;
  std::uint64_t size = 0;
};

// One action of an object's answer (`actions.upload`, `actions.verify`).
struct LfsAction {
  std::string href;
  // `header`: HTTP headers for the basic transfer (basic-transfers.md), or the multipart
  // transfer's `chunk_size` and numbered part URLs (huggingface.co's form). An object.
  nlohmann::json header = nlohmann::json::object();
};

struct LfsObjectAnswer {
  std::string oid;
  std::uint64_t size = 0;
  // No upload action: the server has the object already (lfs.py skips it, batch.md: "the
  // server omits actions").
  std::optional<LfsAction> upload;
  std::optional<LfsAction> verify;
  // `error: {code, message}` for this object (batch.md "Response Errors").
  std::optional<std::pair<long, std::string>> error;
};

struct LfsBatchAnswer {
  std::string transfer;  // the server's choice; "" when absent, which means basic (batch.md)
  std::vector<LfsObjectAnswer> objects;
};

// `{endpoint}/{prefix}{repo}.git/info/lfs/objects/batch` (lfs.py: post_lfs_batch_info).
std::string lfs_batch_url(std::string_view endpoint, const RepoRef& repo);

// `{"operation":"upload","transfers":[...],"objects":[{"oid","size"}],"hash_algo":"sha256",
// "ref":{"name":<revision>}}`, the body huggingface_hub posts (the revision unquoted, as given).
std::string lfs_upload_batch_body(const std::vector<LfsObjectId>& objects, std::string_view revision);

// Checks the answer as lfs.py's _validate_batch_actions/_validate_batch_error do: `objects` a
// list, each with a string `oid` and an integer `size`, actions with a string `href` and an
// object or absent `header`, errors with an integer `code` and a string `message`.
HubResult<LfsBatchAnswer> parse_lfs_batch_answer(std::string_view body, std::string_view what);

// How one object goes up. This is the transfer negotiation, all in plan_lfs_upload, so that
// another transfer (Xet) is one more case here and in k_lfs_upload_transfers.
struct LfsUploadPlan {
  enum class Transfer { already_present, basic, multipart };
  Transfer transfer = Transfer::already_present;
  // basic: the PUT target; multipart: the completion POST (lfs.py posts there after the parts).
  std::string href;
  // basic: the action's headers, sent with the PUT (basic-transfers.md).
  std::vector<std::pair<std::string, std::string>> headers;
  std::uint64_t chunk_size = 0;         // multipart: every part but the last has this size
  std::vector<std::string> part_urls;   // multipart: part 1 first
  std::optional<LfsAction> verify;
};

// The transfers requested, as huggingface_hub requests them when it does not use Xet
// (_commit_api.py: _upload_files passes transfers=["basic", "multipart"]).
const std::vector<std::string>& lfs_upload_transfers();

// Decides the transfer for `object` (our sha256 and size) from the batch answer: none when it
// has no upload action; multipart when the upload action's header has `chunk_size` (what
// lfs_upload tests, whatever `transfer` says), with exactly ceil(size / chunk_size) part URLs
// under the header's all-digit keys; basic otherwise. A `transfer` we did not ask for, an
// answer for another size, or a malformed part list is an invalid_response. `endpoint`
// replaces "https://huggingface.co" in the href and the verify href, as huggingface_hub's
// fix_hf_endpoint_in_url does for mirrors.
HubResult<LfsUploadPlan> plan_lfs_upload(const LfsBatchAnswer& answer, const LfsObjectAnswer& object,
                                         const LfsObjectId& local, std::string_view endpoint);

// `{"oid":..., "parts":[{"partNumber":1,"etag":...}, ...]}` (lfs.py: _get_completion_payload);
// the ETags as the part PUTs answered them, quotes included.
std::string lfs_completion_body(std::string_view oid, const std::vector<std::string>& etags);
// `{"oid":..., "size":...}` (lfs.py: the verify POST).
std::string lfs_verify_body(const LfsObjectId& object);

// huggingface_hub's fix_hf_endpoint_in_url: with a custom endpoint, URLs the Hub answered with
// its default host (https://huggingface.co, https://hub-ci.huggingface.co) are sent to the
// endpoint instead.
std::string fix_hub_endpoint_in_url(std::string_view url, std::string_view endpoint);

}  // namespace kernelhub::hub
