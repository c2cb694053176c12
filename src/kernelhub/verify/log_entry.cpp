// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/log_entry.hpp>

#include <charconv>
#include <vector>

#include <fmt/format.h>

#include <kernelhub/verify/check.hpp>
#include <nlohmann/json.hpp>

namespace kernelhub::verify {

namespace {

using nlohmann::json;

std::string node_hash(std::string_view left, std::string_view right) {
  std::string input(1, '\x01');
  input += left;
  input += right;
  return sha256(input);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Field access on the decoded body that fails with the field's path instead of throwing.
const json* at_path(const json& root, std::initializer_list<const char*> path) {
  const json* node = &root;
  for (const char* key : path) {
    if (!node->is_object()) {
      return nullptr;
    }
    const auto found = node->find(key);
    if (found == node->end()) {
      return nullptr;
    }
    node = &*found;
  }
  return node;
}

bool string_equals(const json& root, std::initializer_list<const char*> path,
                   std::string_view expected) {
  const json* node = at_path(root, path);
  return node != nullptr && node->is_string() && node->get_ref<const std::string&>() == expected;
}

}  // namespace

util::Expected<void> verify_inclusion_proof(const TransparencyLogEntry& entry) {
  const InclusionProof& proof = entry.proof;
  if (proof.log_index >= proof.tree_size) {
    return util::fail(fmt::format("inclusion proof index {} is not below tree size {}",
                                  proof.log_index, proof.tree_size));
  }
  std::string body_leaf(1, '\x00');
  body_leaf += entry.canonicalized_body;
  std::string hash = sha256(body_leaf);
  std::uint64_t index = proof.log_index;
  std::uint64_t last = proof.tree_size - 1;
  for (const std::string& sibling : proof.hashes) {
    if (sibling.size() != 32) {
      return util::fail("inclusion proof hash is not 32 bytes");
    }
    if (last == 0) {
      return util::fail("inclusion proof is too long");
    }
    if ((index & 1) == 1 || index == last) {
      hash = node_hash(sibling, hash);
      if ((index & 1) == 0) {
        while ((index & 1) == 0 && index != 0) {
          index >>= 1;
          last >>= 1;
        }
      }
    } else {
      hash = node_hash(hash, sibling);
    }
    index >>= 1;
    last >>= 1;
  }
  if (last != 0) {
    return util::fail("inclusion proof is too short");
  }
  if (hash != proof.root_hash) {
    return util::fail(fmt::format("inclusion proof leads to root {}, not the expected {}",
                                  hex_lower(hash), hex_lower(proof.root_hash)));
  }
  return {};
}

util::Expected<void> verify_checkpoint(const TransparencyLogEntry& entry, const LogKey& log) {
  const std::string_view note = entry.proof.checkpoint;
  const auto split = note.find("\n\n");
  if (split == std::string_view::npos || note.find("\n\n", split + 1) != std::string_view::npos) {
    return util::fail("checkpoint: malformed note: expected one blank line");
  }
  // The signature covers the text up to and including the last body line's newline.
  const std::string_view signed_text = note.substr(0, split + 1);
  const std::vector<std::string_view> body = split_lines(signed_text);
  if (body.size() < 3 || body[0].empty()) {
    return util::fail("checkpoint: malformed note: missing origin, size or root hash");
  }
  std::uint64_t size = 0;
  const auto [end, error] = std::from_chars(body[1].data(), body[1].data() + body[1].size(), size);
  if (error != std::errc() || end != body[1].data() + body[1].size() || body[1].empty()) {
    return util::fail(fmt::format("checkpoint: malformed tree size \"{}\"", body[1]));
  }
  auto root_hash = base64_decode(body[2]);
  if (!root_hash) {
    return util::fail(fmt::format("checkpoint: malformed root hash \"{}\"", body[2]));
  }

  constexpr std::string_view k_dash = "\xE2\x80\x94 ";  // U+2014 and a space
  const std::string_view hint = std::string_view(log.key_id).substr(0, 4);
  bool verified = false;
  // Signature lines are "— NAME SIGNATURE" with no space inside either part (C2SP); other
  // lines are skipped, as sigstore 4.5.1's pattern skips them.
  for (const std::string_view line : split_lines(note.substr(split + 2))) {
    if (line.substr(0, k_dash.size()) != k_dash) {
      continue;
    }
    const std::string_view rest = line.substr(k_dash.size());
    const auto space = rest.find(' ');
    if (space == 0 || space == std::string_view::npos ||
        rest.find(' ', space + 1) != std::string_view::npos || space + 1 == rest.size()) {
      continue;
    }
    auto decoded = base64_decode(rest.substr(space + 1));
    if (!decoded || decoded->size() < 5) {
      return util::fail("checkpoint: malformed note: signature contains too few bytes");
    }
    if (decoded->substr(0, 4) != hint) {
      continue;  // a witness or another key
    }
    // The first line with the log's key hint decides, as in sigstore 4.5.1.
    if (!verify_signature(log.key.get(), signed_text, decoded->substr(4))) {
      return util::fail("checkpoint: signature is invalid");
    }
    verified = true;
    break;
  }
  if (!verified) {
    return util::fail("checkpoint: no signature from the log's key");
  }
  if (*root_hash != entry.proof.root_hash) {
    return util::fail("checkpoint: root hash does not match the inclusion proof");
  }
  if (size != entry.proof.tree_size) {
    return util::fail("checkpoint: tree size does not match the inclusion proof");
  }
  return {};
}

util::Expected<void> verify_signed_entry_timestamp(const TransparencyLogEntry& entry,
                                                   const LogKey& log) {
  if (!entry.signed_entry_timestamp || !entry.integrated_time) {
    return util::fail("SET: invalid inclusion promise: missing");
  }
  // RFC 8785 canonical JSON with this fixed key order; never re-serialize the body itself.
  const std::string payload = fmt::format(
      R"({{"body":"{}","integratedTime":{},"logID":"{}","logIndex":{}}})",
      base64_encode(entry.canonicalized_body), *entry.integrated_time, hex_lower(entry.log_id),
      entry.log_index);
  if (!verify_signature(log.key.get(), payload, *entry.signed_entry_timestamp)) {
    return util::fail("SET: invalid inclusion promise: signature is invalid");
  }
  return {};
}

util::Expected<void> check_hashedrekord_body(const TransparencyLogEntry& entry,
                                             std::string_view artifact_digest,
                                             std::string_view signature, X509* leaf) {
  if (entry.kind != "hashedrekord") {
    return util::fail(fmt::format("Expected entry type hashedrekord, got {}", entry.kind));
  }
  const json body = json::parse(entry.canonicalized_body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return util::fail("invalid log entry: the body is not JSON");
  }
  const std::string signature_b64 = base64_encode(signature);
  const auto mismatch = [] {
    return util::fail("transparency log entry is inconsistent with other materials");
  };
  if (entry.version == "0.0.1") {
    if (!string_equals(body, {"kind"}, "hashedrekord") ||
        !string_equals(body, {"apiVersion"}, "0.0.1") ||
        !string_equals(body, {"spec", "data", "hash", "algorithm"}, "sha256") ||
        !string_equals(body, {"spec", "data", "hash", "value"}, hex_lower(artifact_digest)) ||
        !string_equals(body, {"spec", "signature", "content"}, signature_b64) ||
        !string_equals(body, {"spec", "signature", "publicKey", "content"},
                       base64_encode(certificate_pem(leaf)))) {
      return mismatch();
    }
    return {};
  }
  if (entry.version == "0.0.2") {
    const json* spec = at_path(body, {"spec", "hashedRekordV002"});
    if (!string_equals(body, {"kind"}, "hashedrekord") ||
        !string_equals(body, {"apiVersion"}, "0.0.2") || spec == nullptr ||
        !string_equals(*spec, {"data", "algorithm"}, "SHA2_256") ||
        !string_equals(*spec, {"data", "digest"}, base64_encode(artifact_digest)) ||
        !string_equals(*spec, {"signature", "content"}, signature_b64) ||
        !string_equals(*spec, {"signature", "verifier", "x509Certificate", "rawBytes"},
                       base64_encode(certificate_der(leaf)))) {
      return mismatch();
    }
    return {};
  }
  return util::fail(fmt::format("unsupported hashedrekord version \"{}\"", entry.version));
}

}  // namespace kernelhub::verify
