// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/server/http_message.hpp>
#include <kernelhub/server/repository_store.hpp>
#include <kernelhub/server/server_settings.hpp>

namespace kernelhub::server {

// The Hub protocol over a RepositoryStore: routes a request on its raw path (hub-api.md §1.2)
// to the read and write handlers and turns every HubError into the Hub's error answer.
// Thread-safe: the HTTP transport calls it from its whole pool.
class HubRouter {
 public:
  explicit HubRouter(ServerSettings settings);

  HttpResponse handle(const HttpRequest& request);

  const ServerSettings& settings() const { return m_settings; }
  RepositoryStore& store() { return m_store; }

 private:
  ServerSettings m_settings;
  RepositoryStore m_store;
};

}  // namespace kernelhub::server
