// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the commit body parser (NDJSON: a header line, then file, deletedFile
// and deletedFolder lines with base64 contents) and the strict base64 decoder it uses. Any
// input must give a request or a 400, never a crash, an out-of-bounds access (ASan), undefined
// behaviour (UBSan) or an exception; what is accepted is checked against the parser's
// contract: safe paths only, and base64 that re-encodes to exactly the text it came from (a
// strict decoder accepts only the canonical form). Commands: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <kernelhub/server/commit_request.hpp>
#include <kernelhub/server/repo_id.hpp>

namespace {

using namespace kernelhub::server;

// RFC 4648 §4 with padding: the reference the decoder's answers are checked against.
std::string encode_base64(std::string_view bytes) {
  static constexpr char k_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    out += {k_alphabet[n >> 18], k_alphabet[(n >> 12) & 63], k_alphabet[(n >> 6) & 63],
            k_alphabet[n & 63]};
  }
  if (bytes.size() - i == 1) {
    const auto n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    out += {k_alphabet[n >> 18], k_alphabet[(n >> 12) & 63], '=', '='};
  } else if (bytes.size() - i == 2) {
    const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8);
    out += {k_alphabet[n >> 18], k_alphabet[(n >> 12) & 63], k_alphabet[(n >> 6) & 63], '='};
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // The decoder alone, on the raw input: accepted means canonical.
  if (const auto decoded = decode_base64(text)) {
    if (encode_base64(*decoded) != text) {
      std::abort();
    }
  }

  // The whole body, once keeping contents and once through a sink, as the server does.
  const auto kept = parse_commit_request(text);
  std::size_t stored = 0;
  const auto sunk = parse_commit_request(text, [&stored](std::string_view bytes) {
    stored += bytes.size();
    return HubExpected<std::string>(std::string(40, '0'));
  });
  if (kept.has_value() != sunk.has_value()) {
    std::abort();
  }
  if (!kept) {
    if (kept.error().status != 400 || kept.error().message.empty() ||
        sunk.error().message != kept.error().message) {
      std::abort();
    }
    return 0;
  }
  std::size_t kept_bytes = 0;
  for (std::size_t i = 0; i < kept->operations.size(); ++i) {
    const CommitOperation& operation = kept->operations[i];
    if (!check_repo_path(operation.path)) {
      std::abort();
    }
    if (operation.kind == CommitOperation::Kind::add_file) {
      if (operation.size != operation.content.size() ||
          sunk->operations[i].blob_id.size() != 40 || !sunk->operations[i].content.empty()) {
        std::abort();
      }
      kept_bytes += operation.content.size();
    }
  }
  if (kept_bytes != stored) {
    std::abort();
  }
  return 0;
}
