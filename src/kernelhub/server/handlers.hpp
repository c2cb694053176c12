// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include <kernelhub/server/http_message.hpp>
#include <kernelhub/server/repo_id.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/repository_store.hpp>
#include <kernelhub/server/request_target.hpp>
#include <kernelhub/server/server_settings.hpp>

// The endpoint handlers behind HubRouter; private to the server layer.
namespace kernelhub::server::handlers {

struct Context {
  const ServerSettings& settings;
  RepositoryStore& store;
  const HttpRequest& request;
  const RequestTarget& target;
};

// Reads (read_handlers.cpp). `revision` nullopt means the default branch.
HubExpected<HttpResponse> repo_info(Context& ctx, const RepoId& id,
                                    const std::optional<std::string>& revision);
HubExpected<HttpResponse> repo_refs(Context& ctx, const RepoId& id);
HubExpected<HttpResponse> repo_tree(Context& ctx, const RepoId& id, const std::string& revision,
                                    const std::string& path);
HubExpected<HttpResponse> resolve_file(Context& ctx, const RepoId& id,
                                       const std::string& revision, const std::string& path);
// paths-info (path_details.cpp): a POST, but a read (no token needed for public repos).
HubExpected<HttpResponse> paths_info(Context& ctx, const RepoId& id, const std::string& revision);
// Tree entries as JSON; with `expand`, each gets lastCommit and files securityFileStatus.
nlohmann::json tree_entries(git_repository* repo, const std::string& commit,
                            const std::vector<TreeItem>& items, bool expand);
HubExpected<HttpResponse> organization_overview(Context& ctx, const std::string& org);
HubExpected<HttpResponse> index_page(Context& ctx);

// Writes (write_handlers.cpp); each checks the bearer token first.
HubExpected<HttpResponse> create_repo(Context& ctx);
HubExpected<HttpResponse> preupload(Context& ctx, const RepoId& id, const std::string& revision);
HubExpected<HttpResponse> commit(Context& ctx, const RepoId& id, const std::string& revision);
HubExpected<HttpResponse> branch(Context& ctx, const RepoId& id, const std::string& name);
HubExpected<HttpResponse> tag(Context& ctx, const RepoId& id, const std::string& name);
HubExpected<HttpResponse> validate_yaml(Context& ctx);

// Shared by both: the repository for a read (a model id falls back to the kernel repo of the
// same name, as `kernels benchmark` asks for models), with private repos hidden from callers
// without a valid token (the 404 RepoNotFound of a missing one).
HubExpected<OpenRepository> open_for_read(Context& ctx, const RepoId& id, RepoId* served = nullptr);
// A token from the token file in `Authorization: Bearer`, or the 401/403 to answer.
HubExpected<void> require_write_token(const Context& ctx);
bool has_valid_token(const Context& ctx);
// "<base>/[kernels/|datasets/]ns/name"
std::string repo_url(const Context& ctx, const RepoId& id);

}  // namespace kernelhub::server::handlers
