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

// Serves the Hub protocol over HTTP/1.1 (keep-alive, a thread pool of settings.threads) until
// SIGINT or SIGTERM, then stops cleanly. `on_listening` gets the base URL once the socket is
// bound, before the first request is accepted.
util::Expected<void> serve(ServerSettings settings, const ListenAddress& address,
                           const std::function<void(const std::string& url)>& on_listening);

}  // namespace kernelhub::server
