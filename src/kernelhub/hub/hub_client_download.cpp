// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <kernelhub/hub/client_support.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/hub/error_mapping.hpp>
#include <kernelhub/hub/hub_url.hpp>
#include <kernelhub/hub/progress_bar.hpp>
#include <kernelhub/util/unique_fd.hpp>

namespace kernelhub::hub {

namespace {

namespace fs = std::filesystem;

constexpr int k_max_redirects = 10;
// A download asks the kernel to start writing its bytes to disk every this many bytes.
constexpr std::uint64_t k_writeback_bytes = std::uint64_t{8} << 20;
// The body's bytes are written to the partial file in pieces of up to this size.
constexpr std::size_t k_write_buffer_bytes = std::size_t{1} << 20;

std::uint64_t existing_size(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// Compares a finished file's content hash with the ETag; a mismatch deletes the file.
HubResult<void> check_digest(const fs::path& file, const FileMetadata& metadata,
                             const std::string& actual, std::string_view what) {
  if (actual != metadata.etag) {
    std::error_code ec;
    fs::remove(file, ec);
    return hub_fail(ErrorKind::checksum,
                    fmt::format("{}: the downloaded bytes hash to {} but the server's ETag is \"{}\"",
                                what, actual, metadata.etag));
  }
  return {};
}

// Checks the finished file against the ETag when it is a content hash; other ETags (a CDN's
// md5, say) cannot be checked and are accepted.
HubResult<void> verify_etag(const fs::path& file, const FileMetadata& metadata,
                            std::string_view what) {
  const auto kind = StreamingHash::kind_of_etag(metadata.etag);
  if (!kind) {
    return {};
  }
  auto actual = *kind == StreamingHash::Kind::git_blob_sha1 ? git_blob_sha1_of_file(file)
                                                            : sha256_of_file(file);
  if (!actual) {
    return hub_fail(ErrorKind::io, actual.error().message);
  }
  return check_digest(file, metadata, *actual, what);
}

// Writes a body to the partial file (appended after a 206, from the start after a 200) and
// hashes it as it arrives, so the finished file is checked without reading it back.
class PartialFileWriter {
public:
  PartialFileWriter(fs::path path, std::uint64_t offset, const FileMetadata& metadata)
      : m_path(std::move(path)), m_offset(offset), m_metadata(metadata) {}
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
    m_fd.reset(::open(m_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666));
    if (!m_fd || ::ftruncate(m_fd.get(), static_cast<off_t>(keep)) != 0 ||
        ::lseek(m_fd.get(), static_cast<off_t>(keep), SEEK_SET) < 0) {
      m_fd.reset();
      return false;
    }
    m_written = keep;
    m_on_disk = keep;
    m_flushed = keep;
    m_buffer.reserve(k_write_buffer_bytes);
    if (const auto kind = StreamingHash::kind_of_etag(m_metadata.etag)) {
      m_hash.emplace(*kind, m_metadata.size);
      if (keep > 0 && !hash_prefix(keep)) {
        m_hash.reset();  // checked from the finished file instead
      }
    }
    return true;
  }

  bool write(std::string_view chunk) {
    if (!m_fd) {
      return false;
    }
    if (m_hash) {
      m_hash->update(chunk);
    }
    m_written += chunk.size();
    // libcurl hands over at most 16 KiB a call (CURL_MAX_WRITE_SIZE): gathered here, they
    // reach the file in few large writes.
    if (m_buffer.size() + chunk.size() > k_write_buffer_bytes && !flush()) {
      return false;
    }
    if (chunk.size() >= k_write_buffer_bytes) {
      return write_all(chunk);
    }
    m_buffer.append(chunk);
    return true;
  }

  // Makes the bytes durable before the caller renames the file into the cache.
  bool close() {
    if (!m_fd) {
      return true;
    }
    const bool ok = flush() && ::fsync(m_fd.get()) == 0;
    m_fd.reset();
    return ok;
  }

  // The hash of the whole file when every byte of it went through this writer (or was read
  // back when resuming); nothing when the file must be hashed from disk.
  std::optional<std::string> digest() {
    if (!m_hash || m_written != m_metadata.size) {
      return std::nullopt;
    }
    auto hex = m_hash->hex();
    m_hash.reset();
    return hex;
  }

  std::uint64_t written() const { return m_written; }
  bool bad_range() const { return m_bad_range; }

private:
  bool flush() {
    const bool ok = write_all(m_buffer);
    m_buffer.clear();
    return ok;
  }

  bool write_all(std::string_view bytes) {
    for (std::string_view left = bytes; !left.empty();) {
      const ssize_t n = ::write(m_fd.get(), left.data(), left.size());
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return false;
      }
      left.remove_prefix(static_cast<std::size_t>(n));
    }
    m_on_disk += bytes.size();
    if (m_on_disk - m_flushed >= k_writeback_bytes) {
      // Starts writing these bytes to disk now, without waiting: the fsync at the end then
      // has little left to wait for, and the page cache never holds the whole file dirty.
      ::sync_file_range(m_fd.get(), static_cast<off_t>(m_flushed),
                        static_cast<off_t>(m_on_disk - m_flushed), SYNC_FILE_RANGE_WRITE);
      m_flushed = m_on_disk;
    }
    return true;
  }

  // The bytes an interrupted download left, hashed before the new ones are appended.
  bool hash_prefix(std::uint64_t length) {
    util::UniqueFd in(::open(m_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in) {
      return false;
    }
    std::vector<char> buffer(std::size_t{1} << 20);
    for (std::uint64_t at = 0; at < length;) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), length - at));
      const ssize_t n = ::pread(in.get(), buffer.data(), want, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return false;
      }
      m_hash->update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      at += static_cast<std::uint64_t>(n);
    }
    return true;
  }

  fs::path m_path;
  std::uint64_t m_offset;
  const FileMetadata& m_metadata;
  // Bytes taken (on disk or in m_buffer), bytes written to the file, bytes sent to writeback.
  std::uint64_t m_written = 0;
  std::uint64_t m_on_disk = 0;
  std::uint64_t m_flushed = 0;
  std::string m_buffer;
  util::UniqueFd m_fd;
  std::optional<StreamingHash> m_hash;
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
    PartialFileWriter writer(task.partial_file, have, metadata);
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
    const auto streamed = writer.digest();
    if (auto verified = streamed ? check_digest(task.partial_file, metadata, *streamed, what)
                                 : verify_etag(task.partial_file, metadata, what);
        !verified) {
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
