// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <atomic>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include <kernelhub/hub/client_support.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/hub/error_mapping.hpp>
#include <kernelhub/hub/hub_url.hpp>
#include <kernelhub/hub/progress_bar.hpp>

namespace kernelhub::hub {

namespace {

namespace fs = std::filesystem;

constexpr int k_max_redirects = 10;

std::uint64_t existing_size(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

bool is_hex(std::string_view text, std::size_t length) {
  return text.size() == length && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Checks the finished file against the ETag when it is a content hash; other ETags (a CDN's
// md5, say) cannot be checked and are accepted.
HubResult<void> verify_etag(const fs::path& file, const FileMetadata& metadata,
                            std::string_view what) {
  util::Expected<std::string> actual = std::string();
  if (is_hex(metadata.etag, 40)) {
    actual = git_blob_sha1_of_file(file);
  } else if (is_hex(metadata.etag, 64)) {
    actual = sha256_of_file(file);
  } else {
    return {};
  }
  if (!actual) {
    return hub_fail(ErrorKind::io, actual.error().message);
  }
  if (*actual != metadata.etag) {
    std::error_code ec;
    fs::remove(file, ec);
    return hub_fail(ErrorKind::checksum,
                    fmt::format("{}: the downloaded bytes hash to {} but the server's ETag is \"{}\"",
                                what, *actual, metadata.etag));
  }
  return {};
}

// Writes a body to the partial file: appended after a 206, from the start after a 200.
class PartialFileWriter {
public:
  PartialFileWriter(fs::path path, std::uint64_t offset) : m_path(std::move(path)), m_offset(offset) {}
  ~PartialFileWriter() { close(); }

  bool start(long status, const HttpHeaders& headers) {
    std::uint64_t keep = 0;
    if (status == 206) {
      // Only append when the server resumes exactly where our bytes end.
      const auto range = headers.get("Content-Range").value_or("");
      if (range.starts_with(fmt::format("bytes {}-", m_offset))) {
        keep = m_offset;
      } else {
        m_bad_range = true;
        return false;
      }
    }
    std::error_code ec;
    fs::resize_file(m_path, keep, ec);
    m_file = std::fopen(m_path.c_str(), keep == 0 ? "wb" : "ab");
    m_written = keep;
    return m_file != nullptr;
  }

  bool write(std::string_view chunk) {
    if (m_file == nullptr || std::fwrite(chunk.data(), 1, chunk.size(), m_file) != chunk.size()) {
      return false;
    }
    m_written += chunk.size();
    return true;
  }

  bool close() {
    if (m_file == nullptr) {
      return true;
    }
    const bool ok = std::fflush(m_file) == 0 && fsync(fileno(m_file)) == 0;
    std::fclose(m_file);
    m_file = nullptr;
    return ok;
  }

  std::uint64_t written() const { return m_written; }
  bool bad_range() const { return m_bad_range; }

private:
  fs::path m_path;
  std::uint64_t m_offset;
  std::uint64_t m_written = 0;
  std::FILE* m_file = nullptr;
  bool m_bad_range = false;
};

}  // namespace

HubResult<DownloadResult> HubClient::download(const DownloadTask& task,
                                              const ProgressCallback& progress) const {
  const auto what = fmt::format("\"{}\" in {} at \"{}\"", task.path, task.repo.id.str(),
                                task.revision);
  if (m_endpoint.offline) {
    return hub_fail(ErrorKind::offline,
                    fmt::format("offline mode is enabled (HF_HUB_OFFLINE): cannot download {}", what));
  }
  DownloadResult result;
  result.metadata = task.expected ? *task.expected
                                  : KH_HUB_TRY(file_metadata(task.repo, task.revision, task.path));
  const FileMetadata& metadata = result.metadata;
  if (!task.partial_file.parent_path().empty()) {
    std::error_code ec;
    fs::create_directories(task.partial_file.parent_path(), ec);
  }
  std::uint64_t have = existing_size(task.partial_file);
  if (have > metadata.size) {
    have = 0;  // not a prefix of this file: start over
  }
  result.resumed_from = have;
  if (metadata.size == 0 || have == metadata.size) {
    // The reference never GETs an empty file; a complete partial file needs no bytes either.
    std::FILE* touch = std::fopen(task.partial_file.c_str(), metadata.size == 0 ? "wb" : "ab");
    if (touch == nullptr) {
      return hub_fail(ErrorKind::io, fmt::format("cannot write \"{}\"", task.partial_file.string()));
    }
    std::fclose(touch);
    if (auto verified = verify_etag(task.partial_file, metadata, what); !verified) {
      return tl::unexpected(verified.error());
    }
    if (progress) {
      progress(metadata.size, metadata.size);
    }
    return result;
  }

  const auto resolve_origin = url_origin(resolve_url(m_endpoint.url, task.repo, task.revision, task.path));
  const int attempts = std::max(1, m_options.retry.max_attempts);
  std::string url = metadata.location;
  int redirects = 0;
  for (int attempt = 1;;) {
    have = existing_size(task.partial_file);
    if (have > metadata.size) {
      have = 0;
    }
    if (!is_http_url(url)) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: refusing to fetch \"{}\"; only http and https are followed",
                                  what, url));
    }
    HttpRequest request;
    request.url = url;
    // The token only goes to the Hub's own host, never to a CDN it redirects to.
    request.headers = base_headers(url_origin(url) == resolve_origin);
    if (have > 0) {
      request.headers.emplace_back("Range", fmt::format("bytes={}-", have));
    }
    PartialFileWriter writer(task.partial_file, have);
    std::uint64_t reported = have;
    bool overrun = false;
    request.on_start = [&writer](long status, const HttpHeaders& headers) {
      return writer.start(status, headers);
    };
    request.sink = [&](std::string_view chunk) {
      // Not a byte past the announced size reaches the disk: a server that keeps sending
      // must not fill it.
      if (chunk.size() > metadata.size - std::min(metadata.size, writer.written())) {
        overrun = true;
        return false;
      }
      if (!writer.write(chunk)) {
        return false;
      }
      if (progress) {
        reported = writer.written();
        progress(reported, metadata.size);
      }
      return true;
    };
    auto response = m_transport->perform(request);
    const bool closed = writer.close();
    if (overrun) {
      std::error_code ec;
      fs::remove(task.partial_file, ec);
      return hub_fail(ErrorKind::checksum,
                      fmt::format("{}: the server sent more than the {} bytes announced", what,
                                  metadata.size));
    }
    if (!response) {
      if (writer.bad_range()) {
        // The server answered a different range: drop our bytes and ask for all of it.
        std::error_code ec;
        fs::resize_file(task.partial_file, 0, ec);
      } else if (!response.error().transient) {
        return hub_fail(ErrorKind::io, fmt::format("{}: {}", what, response.error().message));
      }
      if (++attempt > attempts) {
        return hub_fail(ErrorKind::network, fmt::format("{}: {}", what, response.error().message));
      }
      m_options.sleep(m_options.retry.delay_after(attempt - 1));
      continue;
    }
    if (response->status >= 300 && response->status < 400) {
      const auto location = response->headers.get("Location");
      if (!location || ++redirects > k_max_redirects) {
        return hub_fail(ErrorKind::invalid_response, fmt::format("{}: bad or too many redirects", what));
      }
      url = resolve_location(url, *location);
      continue;
    }
    if (response->status >= 400) {
      if (RetryPolicy::retryable_status(response->status) && attempt < attempts) {
        m_options.sleep(m_options.retry.delay_after(attempt));
        ++attempt;
        continue;
      }
      return tl::unexpected(error_from_response(*response, what));
    }
    if (!closed) {
      return hub_fail(ErrorKind::io, fmt::format("cannot write \"{}\"", task.partial_file.string()));
    }
    const auto size = existing_size(task.partial_file);
    if (size < metadata.size && attempt < attempts) {
      // The stream ended early: resume from what we have.
      m_options.sleep(m_options.retry.delay_after(attempt));
      ++attempt;
      continue;
    }
    if (size != metadata.size) {
      std::error_code ec;
      fs::remove(task.partial_file, ec);
      return hub_fail(ErrorKind::checksum,
                      fmt::format("{}: got {} bytes but the server announced {}", what, size,
                                  metadata.size));
    }
    if (auto verified = verify_etag(task.partial_file, metadata, what); !verified) {
      return tl::unexpected(verified.error());
    }
    return result;
  }
}

std::vector<HubResult<DownloadResult>> HubClient::download_all(
    const std::vector<DownloadTask>& tasks) const {
  std::vector<HubResult<DownloadResult>> results(tasks.size(),
                                                 hub_fail(ErrorKind::io, "not started"));
  ProgressBar bar(fmt::format("downloading {} file(s)", tasks.size()), m_options.progress_bar);
  for (const auto& task : tasks) {
    if (task.expected) {
      bar.add_total(task.expected->size);
    }
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t index = next++; index < tasks.size(); index = next++) {
      const auto& task = tasks[index];
      std::uint64_t seen = 0;
      bool counted = task.expected.has_value();
      results[index] = download(task, [&](std::uint64_t done, std::uint64_t total) {
        if (!counted) {
          bar.add_total(total);
          counted = true;
        }
        if (done > seen) {
          bar.add_done(done - seen);
          seen = done;
        }
      });
    }
  };
  const std::size_t threads = std::min(m_options.parallel_downloads, tasks.size());
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& thread : pool) {
    thread.join();
  }
  bar.finish();
  return results;
}

}  // namespace kernelhub::hub
