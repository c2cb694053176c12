// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <strings.h>

#include <kernelhub/hub/client_support.hpp>
#include <kernelhub/hub/error_mapping.hpp>
#include <kernelhub/hub/hub_url.hpp>
#include <kernelhub/hub/lfs_batch.hpp>
#include <kernelhub/hub/progress_bar.hpp>

// The requests follow huggingface_hub 2.4.0's lfs.py, the client huggingface.co expects:
// - batch: POST with Accept and Content-Type application/vnd.git-lfs+json and the token
//   (post_lfs_batch_info);
// - basic: PUT of the raw bytes to the href, no token (_upload_single_part); the action's
//   headers go with it as basic-transfers.md says (lfs.py sends none; huggingface.co gives
//   none that matter);
// - multipart: PUT of each chunk to its numbered URL, no token, keeping each answer's ETag
//   (_upload_parts_iteratively); then POST of the completion to the href with the LFS
//   content types and no token (_upload_multi_part);
// - verify: POST {"oid","size"} as JSON with the token (lfs_upload), which we send only when
//   the verify URL is on the Hub's own origin.
// Every request is retried as http_backoff retries them (408, 429, 5xx, connection errors).
namespace kernelhub::hub {

namespace {

namespace fs = std::filesystem;
using Headers = std::vector<std::pair<std::string, std::string>>;

// _commit_api.py's UPLOAD_BATCH_MAX_NUM_FILES: objects per batch request.
constexpr std::size_t k_lfs_batch_objects = 256;
// A server may hash a whole object before answering its last byte (a completion, a basic PUT,
// a verify): wait for its answer longer than for an API call. lfs.py waits without a limit.
constexpr std::chrono::seconds k_lfs_answer_wait{600};

const Headers& lfs_content_headers() {
  static const Headers headers{{"Accept", "application/vnd.git-lfs+json"},
                               {"Content-Type", "application/vnd.git-lfs+json"}};
  return headers;
}

// `base` with `extra` added; a name in both keeps `extra`'s value.
Headers merged(Headers base, const Headers& extra) {
  for (const auto& header : extra) {
    const std::string& name = header.first;
    std::erase_if(base, [&name](const auto& entry) { return strcasecmp(entry.first.c_str(), name.c_str()) == 0; });
    base.push_back(header);
  }
  return base;
}

bool is_sha256(std::string_view text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

struct PlannedObject {
  const LfsFile* file = nullptr;
  LfsUploadPlan plan;
};

}  // namespace

HubResult<std::uint64_t> HubClient::send_lfs_object(const LfsFile& file, const LfsUploadPlan& plan,
                                                    const std::function<void(std::uint64_t)>& sent) const {
  const auto what = fmt::format("LFS upload of \"{}\"", file.path_in_repo);
  const auto put = [&](const std::string& url, FileSlice slice, Headers headers,
                       std::string_view part) -> HubResult<HttpResponse> {
    HttpRequest request;
    request.method = "PUT";
    request.url = url;
    request.headers = std::move(headers);
    request.upload = std::move(slice);
    request.low_speed_timeout = k_lfs_answer_wait;
    std::uint64_t seen = 0;
    request.progress = [&seen, &sent](std::uint64_t done, std::uint64_t) {
      // A retried request starts again from 0: only bytes past the best attempt count.
      if (done > seen && sent) {
        sent(done - seen);
        seen = done;
      }
    };
    auto response = KH_HUB_TRY(send(std::move(request), true));
    if (response.status >= 300 && response.status < 400) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}{}: the upload URL answered a redirect ({})", what, part,
                                  response.status),
                      response.status);
    }
    return detail::require_success(std::move(response), fmt::format("{}{}", what, part));
  };

  switch (plan.transfer) {
    case LfsUploadPlan::Transfer::already_present:
      return std::uint64_t{0};
    case LfsUploadPlan::Transfer::basic:
      KH_HUB_TRY(put(plan.href, FileSlice{file.source, 0, file.size}, merged(base_headers(false), plan.headers), ""));
      break;
    case LfsUploadPlan::Transfer::multipart: {
      std::vector<std::string> etags;
      for (std::size_t i = 0; i < plan.part_urls.size(); ++i) {
        const std::uint64_t offset = plan.chunk_size * i;
        const FileSlice slice{file.source, offset, std::min(plan.chunk_size, file.size - offset)};
        const auto part = fmt::format(" (part {} of {})", i + 1, plan.part_urls.size());
        const auto response = KH_HUB_TRY(put(plan.part_urls[i], slice, base_headers(false), part));
        auto etag = response.headers.get("ETag");
        if (!etag || etag->empty()) {
          return hub_fail(ErrorKind::invalid_response,
                          fmt::format("{}{}: the server's answer has no ETag", what, part), response.status);
        }
        etags.push_back(std::move(*etag));
      }
      HttpRequest completion;
      completion.method = "POST";
      completion.url = plan.href;
      completion.headers = merged(base_headers(false), lfs_content_headers());
      completion.body = lfs_completion_body(file.sha256, etags);
      completion.low_speed_timeout = k_lfs_answer_wait;
      KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send(std::move(completion), true)),
                                         fmt::format("{}: completing the multipart upload", what)));
      break;
    }
  }
  if (plan.verify) {
    HttpRequest verify;
    verify.method = "POST";
    verify.url = plan.verify->href;
    Headers action_headers;
    for (const auto& [name, value] : plan.verify->header.items()) {
      if (value.is_string()) {
        action_headers.emplace_back(name, value.get<std::string>());
      }
    }
    // The token only goes to the Hub's own origin, as for downloads.
    verify.headers = merged(base_headers(url_origin(verify.url) == url_origin(m_endpoint.url)),
                            merged({{"Content-Type", "application/json"}}, action_headers));
    verify.body = lfs_verify_body(LfsObjectId{file.sha256, file.size});
    verify.low_speed_timeout = k_lfs_answer_wait;
    KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send(std::move(verify), true)),
                                       fmt::format("{}: verify", what)));
  }
  return file.size;
}

HubResult<LfsUploadSummary> HubClient::upload_lfs_files(const RepoRef& repo, std::string_view revision,
                                                        const std::vector<LfsFile>& files) const {
  const auto what = fmt::format("LFS batch for {} at \"{}\"", repo.id.str(), revision);
  // One object per content: two paths with the same bytes are one upload.
  std::map<std::string, const LfsFile*> by_oid;
  std::vector<LfsObjectId> objects;
  for (const auto& file : files) {
    if (!is_sha256(file.sha256)) {
      return hub_fail(ErrorKind::invalid_argument,
                      fmt::format("\"{}\": \"{}\" is not a sha256", file.path_in_repo, file.sha256));
    }
    if (by_oid.emplace(file.sha256, &file).second) {
      objects.push_back(LfsObjectId{file.sha256, file.size});
    }
  }

  std::vector<PlannedObject> planned;
  LfsUploadSummary summary;
  for (std::size_t first = 0; first < objects.size(); first += k_lfs_batch_objects) {
    const std::vector<LfsObjectId> chunk(
        objects.begin() + static_cast<std::ptrdiff_t>(first),
        objects.begin() + static_cast<std::ptrdiff_t>(std::min(objects.size(), first + k_lfs_batch_objects)));
    HttpRequest request;
    request.method = "POST";
    request.url = lfs_batch_url(m_endpoint.url, repo);
    request.headers = merged(base_headers(true), lfs_content_headers());
    request.body = lfs_upload_batch_body(chunk, revision);
    const auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send(std::move(request), true)), what));
    const auto answer = KH_HUB_TRY(parse_lfs_batch_answer(response.body, what));

    std::vector<std::string> refused;
    std::map<std::string, bool> answered;
    for (const auto& object : answer.objects) {
      const auto it = by_oid.find(object.oid);
      if (it == by_oid.end() || answered.contains(object.oid)) {
        return hub_fail(ErrorKind::invalid_response,
                        fmt::format("{}: an answer for object {}, which was not asked for (or twice)",
                                    what, object.oid));
      }
      answered[object.oid] = true;
      if (object.error) {
        refused.push_back(fmt::format("\"{}\" ({}): {} (code {})", it->second->path_in_repo,
                                      object.oid, object.error->second, object.error->first));
        continue;
      }
      const LfsObjectId local{it->second->sha256, it->second->size};
      auto plan = KH_HUB_TRY(plan_lfs_upload(answer, object, local, m_endpoint.url));
      if (plan.transfer == LfsUploadPlan::Transfer::already_present) {
        ++summary.already_present;
      } else {
        planned.push_back(PlannedObject{it->second, std::move(plan)});
      }
    }
    if (!refused.empty()) {
      return hub_fail(ErrorKind::http_status,
                      fmt::format("{}: the server refused {} object(s): {}", what, refused.size(),
                                  fmt::join(refused, "; ")));
    }
    for (const auto& object : chunk) {
      if (!answered.contains(object.oid)) {
        return hub_fail(ErrorKind::invalid_response,
                        fmt::format("{}: no answer for \"{}\" ({})", what, by_oid.at(object.oid)->path_in_repo,
                                    object.oid));
      }
    }
  }
  if (planned.empty()) {
    return summary;
  }

  ProgressBar bar(fmt::format("uploading {} file(s) with LFS", planned.size()), m_options.progress_bar);
  for (const auto& object : planned) {
    bar.add_total(object.file->size);
  }
  // Each worker takes the next object; after a failure no new object is started.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex results_mutex;
  std::optional<HubError> first_error;
  const auto work = [&] {
    for (std::size_t i = next++; i < planned.size() && !failed; i = next++) {
      auto sent = send_lfs_object(*planned[i].file, planned[i].plan,
                                  [&bar](std::uint64_t bytes) { bar.add_done(bytes); });
      std::lock_guard lock(results_mutex);
      if (!sent) {
        if (!first_error) {
          first_error = sent.error();
        }
        failed = true;
        continue;
      }
      ++summary.uploaded;
      summary.bytes_sent += *sent;
    }
  };
  const auto threads = std::min(std::max<std::size_t>(m_options.parallel_uploads, 1), planned.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    pool.emplace_back(work);
  }
  work();
  for (auto& thread : pool) {
    thread.join();
  }
  bar.finish();
  if (first_error) {
    return tl::unexpected(std::move(*first_error));
  }
  return summary;
}

}  // namespace kernelhub::hub
