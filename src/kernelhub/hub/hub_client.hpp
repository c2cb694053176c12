// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/hub/discussion.hpp>
#include <kernelhub/hub/endpoint.hpp>
#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/hub/hub_types.hpp>
#include <kernelhub/hub/retry_policy.hpp>

// A client for the Hugging Face Hub HTTP API (hub-api.md), usable against huggingface.co and
// against `kernelhub serve`. It knows nothing of the local cache: the cache layer decides
// file names, locks and renames, and calls file_metadata + download.
namespace kernelhub::hub {

struct LfsUploadPlan;  // lfs_batch.hpp

// `GET /api/{T}/{repo}[/revision/{rev}]`.
struct RepoInfo {
  std::string id;
  std::string sha;  // 40-hex commit of the revision
  bool is_private = false;
  std::vector<std::string> siblings;  // every file of the revision, when the server lists them
};

struct GitRef {
  std::string name;           // "main", "v1"
  std::string ref;            // "refs/heads/main"
  std::string target_commit;  // 40-hex
};

// `GET /api/{T}/{repo}/refs`.
struct Refs {
  std::vector<GitRef> branches;
  std::vector<GitRef> tags;
  std::vector<GitRef> pull_requests;  // only with include_prs
};

struct LfsInfo {
  std::string sha256;
  std::uint64_t size = 0;
  std::uint64_t pointer_size = 0;
};

// `GET /api/organizations/{org}/overview`: only what the kernels loader reads of it.
struct OrganizationOverview {
  bool trusted_kernel_publisher = false;  // `trustedKernelPublisher`, truthy
};

// One entry of `GET /api/{T}/{repo}/tree/{rev}[/{path}]`; paths are relative to the repo root.
struct TreeEntry {
  enum class Kind { file, directory };
  Kind kind = Kind::file;
  std::string path;
  std::string oid;  // git blob sha1 (of the LFS pointer for LFS files) or tree sha1
  std::uint64_t size = 0;
  std::optional<LfsInfo> lfs;

  // The name the cache gives the blob: the LFS sha256 when present, else the oid.
  const std::string& blob_id() const { return lfs ? lfs->sha256 : oid; }
};

// The metadata HEAD on `/resolve/` (hub-api.md §2.4).
struct FileMetadata {
  std::string commit;  // X-Repo-Commit
  std::string etag;    // X-Linked-Etag, else ETag; quotes and W/ removed
  std::uint64_t size = 0;  // X-Linked-Size, else Content-Length
  // Where to GET the bytes: an absolute redirect target (CDN), else the resolve URL.
  std::string location;
};

// Called with (bytes done, total bytes) for one download or an aggregate of several.
using ProgressCallback = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct DownloadTask {
  RepoRef repo;
  std::string revision;  // a commit sha, normally (what the cache resolved)
  std::string path;      // path in the repo
  std::filesystem::path partial_file;  // written here; resumed when it already has bytes
  std::optional<FileMetadata> expected;  // from file_metadata; fetched when absent
};

struct DownloadResult {
  FileMetadata metadata;        // what the bytes were checked against
  std::uint64_t resumed_from = 0;  // bytes kept from an earlier partial file
};

// `POST /api/{T}/{repo}/preupload/{rev}`: what the server says about one file.
struct PreuploadFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sample;  // first 512 bytes (raw; base64-encoded by the client)
};
struct PreuploadAnswer {
  std::string path;
  bool lfs = false;  // uploadMode "lfs"
  bool should_ignore = false;
  std::optional<std::string> oid;  // the remote oid when the server knows the file
};

// A file whose bytes go through the Git LFS batch API (preupload said `lfs`).
struct LfsFile {
  std::string path_in_repo;  // named in messages
  std::filesystem::path source;
  std::string sha256;        // of the file's bytes, lowercase hex: the LFS oid
  std::uint64_t size = 0;
};

struct LfsUploadSummary {
  std::size_t uploaded = 0;         // objects sent
  std::size_t already_present = 0;  // objects the server had (no upload action)
  std::uint64_t bytes_sent = 0;
};

// One operation of `POST /api/{T}/{repo}/commit/{rev}`.
struct CommitOperation {
  enum class Kind { add_file, add_lfs_file, delete_file, delete_folder };
  Kind kind = Kind::add_file;
  std::string path_in_repo;
  // For add_file: the bytes come from `source` when set, else from `content`.
  std::optional<std::filesystem::path> source;
  std::string content;
  // For add_lfs_file: the object uploaded with upload_lfs_files.
  std::string lfs_sha256{};
  std::uint64_t lfs_size = 0;
};

struct CommitResult {
  std::string commit_oid;
  std::string commit_url;
  std::optional<std::string> pull_request_url;
};

struct ClientOptions {
  RetryPolicy retry;
  std::size_t parallel_downloads = 8;
  // Show a progress bar on stderr when it is a terminal (never otherwise).
  bool progress_bar = true;
  // LFS objects uploaded at once (huggingface_hub's num_threads default); parts of one object
  // go one after the other, as lfs.py sends them.
  std::size_t parallel_uploads = 5;
  // Waits between retries; replaced by the tests so no test sleeps.
  std::function<void(std::chrono::milliseconds)> sleep;
};

class HubClient {
public:
  // `transport` defaults to libcurl.
  explicit HubClient(Endpoint endpoint, ClientOptions options = {},
                     std::shared_ptr<Transport> transport = nullptr);

  const Endpoint& endpoint() const { return m_endpoint; }

  // `revision` absent: the bare `/api/{T}/{repo}` form (default branch).
  HubResult<RepoInfo> repo_info(const RepoRef& repo,
                                std::optional<std::string_view> revision = std::nullopt) const;
  HubResult<Refs> list_refs(const RepoRef& repo, bool include_prs = false) const;
  // The kernels loader's publisher trust check reads this (loader.md §5.1).
  HubResult<OrganizationOverview> organization_overview(std::string_view organization) const;
  // A kernelhub serve extension (`GET /api/kernelhub/trusted-keys`): the PEM public keys the
  // organisation signs kernels with. A Hub without it answers 404 (ErrorKind::http_status).
  HubResult<std::vector<std::string>> trusted_keys() const;
  // Follows `Link: <...>; rel="next"` pages. `path` empty lists from the root.
  HubResult<std::vector<TreeEntry>> list_tree(const RepoRef& repo, std::string_view revision,
                                              std::string_view path = {},
                                              Recursive recursive = Recursive::no) const;
  // HEAD without following absolute redirects (relative ones are followed). An EntryNotFound
  // error carries the server's X-Repo-Commit in HubError::repo_commit.
  HubResult<FileMetadata> file_metadata(const RepoRef& repo, std::string_view revision,
                                        std::string_view path) const;
  // GETs `task.expected->location` (or the resolve URL) into `task.partial_file`, resuming
  // from its current size with Range (restarting when the server answers 200), then checks
  // the size and the ETag: git blob sha1 for a 40-hex etag, sha256 for a 64-hex one. On a
  // checksum failure the partial file is removed. The caller renames the file into place.
  HubResult<DownloadResult> download(const DownloadTask& task,
                                     const ProgressCallback& progress = {}) const;
  // Runs the tasks on options.parallel_downloads threads, with one progress bar for all.
  // The results are in the order of the tasks.
  std::vector<HubResult<DownloadResult>> download_all(const std::vector<DownloadTask>& tasks) const;

  // `POST /api/repos/create`; returns the repo URL. With ExistOk::yes a 409 is success.
  HubResult<std::string> create_repo(const RepoRef& repo, Visibility visibility = Visibility::public_repo,
                                     ExistOk exist_ok = ExistOk::yes) const;
  HubResult<void> create_branch(const RepoRef& repo, std::string_view branch,
                                std::optional<std::string_view> starting_point = std::nullopt,
                                ExistOk exist_ok = ExistOk::no) const;
  HubResult<void> create_tag(const RepoRef& repo, std::string_view revision, std::string_view tag,
                             std::string_view message = {}) const;
  // Batches of at most 256 files per request, as the reference does.
  HubResult<std::vector<PreuploadAnswer>> preupload(const RepoRef& repo, std::string_view revision,
                                                    const std::vector<PreuploadFile>& files,
                                                    CreatePr create_pr = CreatePr::no) const;
  // Sends the files' bytes through the Git LFS batch API, as huggingface_hub does without Xet
  // (lfs.py): batches of at most 256 objects asking for the basic and multipart transfers, a
  // PUT of the file or of each part, read from disk a piece at a time, each PUT retried as
  // RetryPolicy says, then the multipart completion and the verify call when the server asks
  // for them. Objects the server already has are not sent. Commit them afterwards with
  // add_lfs_file operations.
  HubResult<LfsUploadSummary> upload_lfs_files(const RepoRef& repo, std::string_view revision,
                                               const std::vector<LfsFile>& files) const;
  // One NDJSON commit with every operation (files base64-encoded). `parent_commit` makes the
  // server refuse (412) when the branch moved.
  HubResult<CommitResult> commit(const RepoRef& repo, std::string_view revision,
                                 const std::vector<CommitOperation>& operations,
                                 std::string_view summary, std::string_view description = {},
                                 std::optional<std::string_view> parent_commit = std::nullopt,
                                 CreatePr create_pr = CreatePr::no) const;

  // The discussions API (hub_client_discussions.cpp), for every repository type: the Hub
  // serves kernel repositories' discussions at /api/kernels/... as it does models'.
  // `type`: "all", "discussion" or "pull_request"; `status`: "all", "open" or "closed"; empty
  // sends neither. Every page is read (the Hub answers 50 at a time).
  HubResult<std::vector<Discussion>> list_discussions(const RepoRef& repo, std::string_view type,
                                                      std::string_view status,
                                                      std::string_view author = {}) const;
  // With the events, the target branch, conflicting files and the diff.
  HubResult<Discussion> discussion_details(const RepoRef& repo, long num) const;
  HubResult<DiscussionEvent> comment_discussion(const RepoRef& repo, long num,
                                                std::string_view comment) const;
  // `status`: "open" or "closed"; the comment is optional.
  HubResult<DiscussionEvent> change_discussion_status(const RepoRef& repo, long num,
                                                      std::string_view status,
                                                      std::string_view comment = {}) const;
  HubResult<DiscussionEvent> merge_pull_request(const RepoRef& repo, long num,
                                                std::string_view comment = {}) const;

private:
  HubResult<DiscussionEvent> post_discussion_change(const RepoRef& repo, long num,
                                                    std::string_view resource,
                                                    const std::string& body,
                                                    std::string_view answer_key) const;
  HubResult<HttpResponse> send(HttpRequest request, bool retry) const;
  // "cannot reach the Hub at <endpoint> (...)": what a refused connection tells the user.
  std::string unreachable_message(std::string_view url, const TransportError& error) const;
  HubResult<HttpResponse> send_json(std::string method, std::string url, std::string body) const;
  std::vector<std::pair<std::string, std::string>> base_headers(bool with_token) const;
  // One object's PUT(s), completion and verify; `sent` gets the bytes as they go. Returns the
  // bytes sent.
  HubResult<std::uint64_t> send_lfs_object(const LfsFile& file, const LfsUploadPlan& plan,
                                           const std::function<void(std::uint64_t)>& sent) const;

  Endpoint m_endpoint;
  ClientOptions m_options;
  std::shared_ptr<Transport> m_transport;
};

}  // namespace kernelhub::hub
