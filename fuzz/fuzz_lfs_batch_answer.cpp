// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the Git LFS batch answer as `kernel-builder upload` reads it (hub layer):
// the server's JSON decides which URLs get a PUT and which headers go with it, so it is
// untrusted input. Any bytes must give an answer or an error, and every object of a parsed
// answer a plan or an error, never a crash, an out-of-bounds access (ASan), undefined behaviour
// (UBSan) or an exception; a plan keeps its promises (one part URL per chunk, headers that are
// headers). Commands: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <kernelhub/hub/lfs_batch.hpp>

namespace hub = kernelhub::hub;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto answer = hub::parse_lfs_batch_answer(text, "fuzz");
  if (!answer) {
    if (answer.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  for (const auto& object : answer->objects) {
    // As the client asks: the object's own size, and one size off.
    for (const std::uint64_t local : {object.size, object.size + 1}) {
      const auto plan = hub::plan_lfs_upload(*answer, object, {object.oid, local}, "http://127.0.0.1:1");
      if (!plan) {
        if (plan.error().message.empty()) {
          std::abort();
        }
        continue;
      }
      if (local != object.size) {
        std::abort();  // an answer for another size must be refused
      }
      using Transfer = hub::LfsUploadPlan::Transfer;
      if (plan->transfer == Transfer::multipart &&
          (plan->chunk_size == 0 || plan->part_urls.size() != (local + plan->chunk_size - 1) / plan->chunk_size)) {
        std::abort();
      }
      for (const auto& [name, value] : plan->headers) {
        if (name.empty() || name.find_first_of(":\r\n") != std::string::npos ||
            value.find_first_of("\r\n") != std::string::npos) {
          std::abort();
        }
      }
    }
  }
  return 0;
}
