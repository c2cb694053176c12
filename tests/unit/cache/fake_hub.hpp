// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/hub/hub_client.hpp>

// An in-memory Hub with one kernel repository at one commit, speaking just enough of the
// protocol (repo info, refs, recursive tree, resolve HEAD/GET with Range) for the cache's
// tests, and recording every request so tests can assert what went over the wire. Paths in
// `lfs` are served as huggingface.co serves LFS files: the tree lists the pointer's sha1 with
// `lfs: {oid: sha256, size, pointerSize}`, and resolve answers 302 to a signed URL on another
// host (the CDN) with X-Linked-Etag and X-Linked-Size.
namespace kernelhub::cache::testing {

class FakeHub : public hub::Transport {
 public:
  static constexpr const char* k_base = "http://hub.test";
  static constexpr const char* k_cdn = "http://cdn.test:9000";

  std::string repo_id = "org/relu";
  std::string commit = "0123456789abcdef0123456789abcdef01234567";
  std::map<std::string, std::string> files;     // path -> content
  std::map<std::string, std::string> branches;  // name -> commit
  std::map<std::string, bool> organizations;    // name -> trustedKernelPublisher; others 404
  bool unreachable = false;                     // every request fails as a refused connection
  std::vector<std::string> ranges;              // Range headers received, in order
  std::set<std::string> lfs;                    // paths stored as LFS objects
  std::vector<std::string> cdn_authorization;   // Authorization sent to the CDN ("" for none)

  static std::string lfs_pointer(const std::string& content) {
    return "version https://git-lfs.github.com/spec/v1\noid sha256:" + hub::sha256_hex(content) +
           "\nsize " + std::to_string(content.size()) + "\n";
  }

  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> guard(m_mutex);
    return m_requests;
  }
  std::size_t count(const std::string& method, const std::string& needle) const {
    std::size_t n = 0;
    for (const auto& line : requests()) {
      if (line.rfind(method + " ", 0) == 0 && line.find(needle) != std::string::npos) {
        ++n;
      }
    }
    return n;
  }

  tl::expected<hub::HttpResponse, hub::TransportError> perform(const hub::HttpRequest& request) override {
    {
      std::lock_guard<std::mutex> guard(m_mutex);
      m_requests.push_back(request.method + " " + request.url.substr(std::string(k_base).size()));
    }
    if (unreachable) {
      return tl::unexpected(hub::TransportError{"connection refused", false});
    }
    if (request.url.rfind(k_cdn, 0) == 0) {
      return cdn(request);
    }
    const std::string path = request.url.substr(std::string(k_base).size());
    const std::string api = "/api/kernels/" + repo_id;
    const std::string resolve = "/kernels/" + repo_id + "/resolve/";
    const std::string orgs = "/api/organizations/";
    if (path.rfind(orgs, 0) == 0 && path.ends_with("/overview")) {
      const auto name = path.substr(orgs.size(), path.size() - orgs.size() - 9);
      if (const auto found = organizations.find(name); found != organizations.end()) {
        return json_response({{"name", name}, {"trustedKernelPublisher", found->second}});
      }
    }
    if (path == api + "/revision/main") {
      return json_response({{"id", repo_id}, {"sha", commit}});
    }
    if (path == api + "/refs") {
      nlohmann::json out = {{"branches", nlohmann::json::array()},
                            {"converts", nlohmann::json::array()},
                            {"tags", nlohmann::json::array()}};
      for (const auto& [name, target] : branches) {
        out["branches"].push_back(
            {{"name", name}, {"ref", "refs/heads/" + name}, {"targetCommit", target}});
      }
      return json_response(out);
    }
    if (path.rfind(api + "/tree/", 0) == 0) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& [name, content] : files) {
        if (lfs.contains(name)) {
          const auto pointer = lfs_pointer(content);
          out.push_back({{"type", "file"}, {"oid", hub::git_blob_sha1(pointer)},
                         {"size", content.size()}, {"path", name},
                         {"lfs", {{"oid", hub::sha256_hex(content)}, {"size", content.size()},
                                  {"pointerSize", pointer.size()}}}});
          continue;
        }
        out.push_back({{"type", "file"}, {"oid", hub::git_blob_sha1(content)},
                       {"size", content.size()}, {"path", name}});
      }
      return json_response(out);
    }
    if (path.rfind(resolve, 0) == 0) {
      const auto rest = path.substr(resolve.size());
      const auto file = rest.substr(rest.find('/') + 1);
      const auto found = files.find(file);
      hub::HttpResponse response;
      response.headers.add("X-Repo-Commit", commit);
      if (found == files.end()) {
        response.status = 404;
        response.headers.add("X-Error-Code", "EntryNotFound");
        return response;
      }
      const std::string& content = found->second;
      if (lfs.contains(file)) {
        const auto sha256 = hub::sha256_hex(content);
        response.status = 302;
        response.headers.add("Location", std::string(k_cdn) + "/blobs/" + sha256 + "?sig=1");
        response.headers.add("ETag", "\"" + hub::git_blob_sha1(lfs_pointer(content)) + "\"");
        response.headers.add("X-Linked-Etag", "\"" + sha256 + "\"");
        response.headers.add("X-Linked-Size", std::to_string(content.size()));
        return response;
      }
      response.status = 200;
      response.headers.add("ETag", "\"" + hub::git_blob_sha1(content) + "\"");
      return serve(request, content, std::move(response));
    }
    hub::HttpResponse missing;
    missing.status = 404;
    missing.headers.add("X-Error-Code", "RepoNotFound");
    return missing;
  }

 private:
  // The CDN: bytes by sha256, Range honoured, only with the signature in the query.
  tl::expected<hub::HttpResponse, hub::TransportError> cdn(const hub::HttpRequest& request) {
    std::string authorization;
    for (const auto& [name, value] : request.headers) {
      if (name == "Authorization") {
        authorization = value;
      }
    }
    {
      std::lock_guard<std::mutex> guard(m_mutex);
      cdn_authorization.push_back(authorization);
    }
    for (const auto& [name, content] : files) {
      if (lfs.contains(name) &&
          request.url == std::string(k_cdn) + "/blobs/" + hub::sha256_hex(content) + "?sig=1") {
        hub::HttpResponse response;
        response.status = 200;
        return serve(request, content, std::move(response));
      }
    }
    hub::HttpResponse missing;
    missing.status = 403;
    return missing;
  }

  // Sends `content` (from the Range when one is asked for) to the request's sink or body.
  tl::expected<hub::HttpResponse, hub::TransportError> serve(const hub::HttpRequest& request,
                                                             const std::string& content,
                                                             hub::HttpResponse response) {
    std::string body = content;
    for (const auto& [name, value] : request.headers) {
      if (name == "Range") {
        std::lock_guard<std::mutex> guard(m_mutex);
        ranges.push_back(value);
        const auto from = std::stoull(value.substr(6));
        response.status = 206;
        response.headers.add("Content-Range", "bytes " + std::to_string(from) + "-" +
                                                  std::to_string(content.size() - 1) + "/" +
                                                  std::to_string(content.size()));
        body = content.substr(from);
      }
    }
    response.headers.add("Content-Length", std::to_string(body.size()));
    if (request.method == "GET" && request.sink) {
      if (request.on_start && !request.on_start(response.status, response.headers)) {
        return tl::unexpected(hub::TransportError{"aborted", false});
      }
      if (!request.sink(body)) {
        return tl::unexpected(hub::TransportError{"aborted", false});
      }
    } else if (request.method == "GET") {
      response.body = body;
    }
    return response;
  }

  static hub::HttpResponse json_response(const nlohmann::json& value) {
    hub::HttpResponse response;
    response.status = 200;
    response.headers.add("Content-Type", "application/json");
    response.body = value.dump();
    return response;
  }

  mutable std::mutex m_mutex;
  std::vector<std::string> m_requests;
};

inline hub::HubClient fake_client(std::shared_ptr<FakeHub> hub, bool offline = false) {
  hub::Endpoint endpoint;
  endpoint.url = FakeHub::k_base;
  endpoint.user_agent = "kernelhub-test";
  endpoint.offline = offline;
  hub::ClientOptions options;
  options.progress_bar = false;
  options.sleep = [](std::chrono::milliseconds) {};
  options.retry.max_attempts = 1;
  return hub::HubClient(endpoint, options, std::move(hub));
}

}  // namespace kernelhub::cache::testing
