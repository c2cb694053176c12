// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for what the server does with a request head before any body byte: the
// head parser (parse_request_head, the one the socket transport uses), the router's admit
// decision, the request target split and the Range decision; GET and HEAD heads are then
// routed in full over an empty root. Any input must give an answer or a 4xx, never a crash,
// an out-of-bounds access (ASan), undefined behaviour (UBSan) or an escaping exception.
// Commands: fuzz/README.md.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <kernelhub/server/byte_range.hpp>
#include <kernelhub/server/hub_router.hpp>
#include <kernelhub/server/request_head.hpp>
#include <kernelhub/server/request_target.hpp>

namespace {

using namespace kernelhub::server;

constexpr std::size_t k_max_head = 8 << 10;

HubRouter& router() {
  // One router for the whole run over an empty root of its own, with a write token, so both
  // sides of every admit decision are reached.
  static HubRouter instance([] {
    ServerSettings settings;
    settings.root = std::filesystem::temp_directory_path() /
                    ("kernelhub-fuzz-root-" + std::to_string(::getpid()));
    std::filesystem::create_directories(settings.root);
    settings.tokens = {"fuzz-token"};
    settings.max_body_bytes = 1 << 20;
    return settings;
  }());
  return instance;
}

bool is_client_error(int status) { return status >= 400 && status < 500; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto head = parse_request_head(bytes, k_max_head, "http://127.0.0.1:1");
  if (!head) {
    // A refused head is always the client's fault, and says why.
    if (!is_client_error(head.error().status) || head.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  if (head->request.target.size() > size || !head->request.body.empty()) {
    std::abort();
  }
  const auto plan = router().admit(head->request);
  if (!plan && !is_client_error(plan.error().status)) {
    std::abort();
  }
  if (plan && plan->limit > (std::uint64_t{16} << 20)) {
    std::abort();  // above the JSON cap and the commit cap (--max-body-mib 1) both
  }
  (void)parse_request_target(head->request.target);
  const RangeDecision range = decide_range(head->request.header("range"), 1000);
  if (range.outcome == RangeOutcome::partial &&
      (range.length == 0 || range.offset + range.length > 1000)) {
    std::abort();
  }
  if (plan && !head->has_body &&
      (head->request.method == "GET" || head->request.method == "HEAD")) {
    const HttpResponse response = router().handle(head->request);
    if (response.status < 200 || response.status >= 500) {
      std::abort();
    }
  }
  return 0;
}
