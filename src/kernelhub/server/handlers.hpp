// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <kernelhub/server/cache_policy.hpp>
#include <kernelhub/server/commit_request.hpp>
#include <kernelhub/server/http_message.hpp>
#include <kernelhub/server/lfs_grant.hpp>
#include <kernelhub/server/lfs_pointer.hpp>
#include <kernelhub/server/lfs_policy.hpp>
#include <kernelhub/server/repo_id.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/repository_store.hpp>
#include <kernelhub/server/request_target.hpp>
#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/server/variant_check_queue.hpp>

namespace kernelhub::server {
class UpstreamMirror;
}

// The endpoint handlers behind HubRouter; private to the server layer.
namespace kernelhub::server::handlers {

struct Context {
  const ServerSettings& settings;
  RepositoryStore& store;
  const HttpRequest& request;
  const RequestTarget& target;
  // The token of the browser session (web/login_page.hpp) a GET or HEAD of a page came with;
  // null for the API and for every write, which take only the Authorization header.
  const std::string* session_token = nullptr;
  // Signs and checks the URLs the LFS batch API hands out (lfs_grant.hpp); null where no LFS
  // route is served (then every signed URL is refused).
  const UrlSigner* signer = nullptr;
  // Where a new commit of a kernel is queued for the check of its variants
  // (variant_check_queue.hpp); null where nothing is checked after commits.
  VariantCheckQueue* variant_checks = nullptr;
  // Where an LFS object a mirrored repository lacks is fetched from (upstream_mirror.hpp);
  // null where this hub mirrors nothing.
  UpstreamMirror* mirror = nullptr;
};

// Reads (read_handlers.cpp). `revision` nullopt means the default branch.
HubExpected<HttpResponse> repo_info(Context& ctx, const RepoId& id,
                                    const std::optional<std::string>& revision);
HubExpected<HttpResponse> repo_refs(Context& ctx, const RepoId& id);
HubExpected<HttpResponse> repo_tree(Context& ctx, const RepoId& id, const std::string& revision,
                                    const std::string& path);
HubExpected<HttpResponse> resolve_file(Context& ctx, const RepoId& id,
                                       const std::string& revision, const std::string& path);
// list_repo_commits (commit_listing.cpp): 50 a page, `Link` to the next.
HubExpected<HttpResponse> repo_commits(Context& ctx, const RepoId& id,
                                       const std::string& revision);
// paths-info (path_details.cpp): a POST, but a read (no token needed for public repos).
HubExpected<HttpResponse> paths_info(Context& ctx, const RepoId& id, const std::string& revision);
// Tree entries as JSON; with `expand`, each gets lastCommit and files securityFileStatus.
nlohmann::json tree_entries(git_repository* repo, const std::string& commit,
                            const std::vector<TreeItem>& items, bool expand);
HubExpected<HttpResponse> organization_overview(Context& ctx, const std::string& org);
HubExpected<HttpResponse> index_page(Context& ctx);
// `GET /api/kernelhub/trusted-keys`: {"keys": [{"hint", "algorithm", "pem"}]}, the keys of
// config.toml's [signing] trusted-keys (an empty list when none). Public, like the overview.
HubExpected<HttpResponse> trusted_keys(Context& ctx);
// `GET /api/{type}/{ns}/{name}/variant-checks/{rev}`: what the hub recorded of the checks of
// each variant under build/ at `rev` (web/variant_matrix.hpp), and whether they are still
// running: {"commit", "verifying", "variants": [{"name", "tree", "state": "recorded",
// "verifying" or "unchecked", and when recorded "checkedAt", "checkedCommit", "digest",
// "signed", "signature"}]}. Runs no check itself.
HubExpected<HttpResponse> variant_checks(Context& ctx, const RepoId& id,
                                         const std::string& revision);

// Writes (write_handlers.cpp); each checks the bearer token first.
HubExpected<HttpResponse> create_repo(Context& ctx);
HubExpected<HttpResponse> preupload(Context& ctx, const RepoId& id, const std::string& revision);
HubExpected<HttpResponse> commit(Context& ctx, const RepoId& id, const std::string& revision);
HubExpected<HttpResponse> branch(Context& ctx, const RepoId& id, const std::string& name);
HubExpected<HttpResponse> tag(Context& ctx, const RepoId& id, const std::string& name);
HubExpected<HttpResponse> validate_yaml(Context& ctx);

// Git LFS (lfs_handlers.cpp; tests/data/hub/lfs-wire-forms.md lists the wire forms and sources).
// `POST /{prefix}{repo}.git/info/lfs/objects/batch`: upload needs a write token, download
// read access; the answer's URLs are signed (lfs_grant.hpp).
HubExpected<HttpResponse> lfs_batch(Context& ctx, const RepoId& id);
// The signed object URLs under `.../info/lfs/objects/{oid}`: `rest` is what follows the oid:
// nothing (PUT: a basic upload), a part number (PUT: a multipart part), `complete` or `verify`
// (POST).
HubExpected<HttpResponse> lfs_object(Context& ctx, const RepoId& id, const std::string& oid,
                                     std::span<const std::string> rest);
// `GET|HEAD /.kernelhub/lfs/{type}/{ns}/{name}/{oid}[?commit=..]` (public repositories) or
// `...?<signed>` (private ones): the stand-in for the Hub's CDN, where a resolve of an LFS file
// redirects; Range, If-Range and If-None-Match work.
HubExpected<HttpResponse> lfs_download(Context& ctx, const RepoId& id, const std::string& oid);
// The answer to a resolve (GET or HEAD) of an LFS file: 302 to its signed download URL with
// X-Linked-Etag, X-Linked-Size and X-Repo-Commit, as huggingface.co answers. A public
// object's URL is unsigned and stable (cacheable as long as `lifetime`), a private one's signed.
HubExpected<HttpResponse> lfs_redirect(Context& ctx, const RepoId& id, const std::string& commit,
                                       const LfsPointer& pointer, Audience audience,
                                       Lifetime lifetime);
// How `path` (of `size` bytes starting with `sample`) must be uploaded onto `commit`.
UploadVerdict upload_verdict(const Context& ctx, git_repository* repo, const std::string& commit,
                             const std::string& path, std::uint64_t size,
                             std::string_view sample);
// What the transport may read of a request to an LFS object URL, decided before any body
// byte: nothing without a valid signature; a basic upload's or a part's exact size, spooled
// to a file; a small JSON otherwise.
struct LfsBodyPlan {
  bool to_file = false;
  std::uint64_t limit = 0;
};
HubExpected<LfsBodyPlan> lfs_admit(Context& ctx, const RepoId& id, const std::string& oid,
                                   std::span<const std::string> rest);
// A refusal of a Xet request (`/api/{T}/{repo}/xet-{read,write}-token/{rev}`): this hub speaks
// Git LFS only, and says how to make huggingface_hub use it.
HubExpected<HttpResponse> xet_not_served(Context& ctx);

// Discussions and pull requests (discussions.cpp): `args` are the segments after
// `discussions`.
HubExpected<HttpResponse> discussions(Context& ctx, const RepoId& id,
                                      std::span<const std::string> args);
// Pull requests (pull_requests.cpp). The server knows no user names: every discussion event
// is written by this author.
inline constexpr std::string_view k_discussion_author = "kernelhub";
// "<repo url>/discussions/<num>": what huggingface_hub parses the PR number from.
std::string discussion_url(const Context& ctx, const RepoId& id, long num);
// N of "refs/pr/N", or nullopt.
std::optional<long> pull_request_number(std::string_view ref);
// A commit with create_pr=1 onto `branch_ref` (refs/heads/...): opens refs/pr/<N>. The
// caller holds the repository's write mutex, as for the two below.
HubExpected<HttpResponse> open_pull_request(Context& ctx, const RepoId& id,
                                            const OpenRepository& repo,
                                            const std::string& branch_ref,
                                            const CommitRequest& request);
// A commit to `refs/pr/<N>` of an open or draft pull request.
HubExpected<HttpResponse> push_to_pull_request(Context& ctx, const RepoId& id,
                                               const OpenRepository& repo,
                                               const std::string& pr_ref,
                                               const CommitRequest& request);
// Queues the check of the variants of `commit`, just made in kernel repository `id`, against the
// keys in force (nothing for models and datasets): called after every accepted commit.
void queue_variant_checks(const Context& ctx, const RepoId& id, const std::string& commit);
// Merges the pull request `discussion` (which it marks merged) into its base branch; returns
// the status-change event to record.
HubExpected<nlohmann::json> merge_pull_request(Context& ctx, const RepoId& id,
                                               nlohmann::json& discussion);

// Shared by both: the repository for a read (a model id falls back to the kernel repo of the
// same name, as `kernels benchmark` asks for models), with private repos hidden from callers
// without a valid token (the 404 RepoNotFound of a missing one).
HubExpected<OpenRepository> open_for_read(Context& ctx, const RepoId& id, RepoId* served = nullptr);
// A token from the token file in `Authorization: Bearer`, or the 401/403 to answer.
HubExpected<void> require_write_token(const Context& ctx);
// A token the server accepts in `Authorization: Bearer`, or else in `ctx.session_token`.
bool has_valid_token(const Context& ctx);
// "<base>/[kernels/|datasets/]ns/name"
std::string repo_url(const Context& ctx, const RepoId& id);

}  // namespace kernelhub::server::handlers
