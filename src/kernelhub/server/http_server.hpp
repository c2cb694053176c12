// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>

#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: pick a free port
};

// Serves the Hub protocol over HTTP/1.1 (keep-alive; event-driven, so a connection waiting for
// bytes holds no thread; settings.threads event loops share the connections; every wait
// bounded by settings.limits) until SIGINT or SIGTERM, then stops at once: waiting connections are
// dropped, a running handler finishes. Before listening it locks the root (RootLock: a
// second server on the same root gets an error naming the first's pid) and removes the
// leftovers of a killed run (RepositoryStore::remove_leftovers); config.toml and the token file are read again on
// SIGHUP and when their stamps change (checked at most once a second, on a request).
// `on_listening` gets the base URL once the socket is bound, before the first request is
// accepted; `log` gets one line for each thing an operator should know.
util::Expected<void> serve(ServerSettings settings, const ListenAddress& address,
                           const std::function<void(const std::string& url)>& on_listening,
                           const std::function<void(const std::string& message)>& log);

}  // namespace kernelhub::server
