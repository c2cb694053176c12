// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/log_entry.hpp>

#include "verify_test_data.hpp"

using namespace kernelhub::verify;

namespace {

Bundle happy() {
  auto bundle = parse_bundle(test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
  if (!bundle) {
    throw std::runtime_error(bundle.error().message);
  }
  return *bundle;
}

const LogKey& rekor() { return production_trusted_root().tlogs[0]; }

}  // namespace

TEST(VerifyLogEntry, RealEntryProvesInclusionCheckpointAndPromise) {
  const Bundle bundle = happy();
  EXPECT_TRUE(verify_inclusion_proof(bundle.entry));
  auto checkpoint = verify_checkpoint(bundle.entry, rekor());
  EXPECT_TRUE(checkpoint) << checkpoint.error().message;
  auto promise = verify_signed_entry_timestamp(bundle.entry, rekor());
  EXPECT_TRUE(promise) << promise.error().message;
}

TEST(VerifyLogEntry, OneChangedByteBreaksEachCheck) {
  {
    Bundle bundle = happy();
    bundle.entry.canonicalized_body[10] ^= 1;
    EXPECT_FALSE(verify_inclusion_proof(bundle.entry));
    EXPECT_FALSE(verify_signed_entry_timestamp(bundle.entry, rekor()));
  }
  {
    Bundle bundle = happy();
    ASSERT_FALSE(bundle.entry.proof.hashes.empty());
    bundle.entry.proof.hashes[0][0] ^= 1;
    EXPECT_FALSE(verify_inclusion_proof(bundle.entry));
  }
  {
    Bundle bundle = happy();
    bundle.entry.proof.hashes.pop_back();
    EXPECT_FALSE(verify_inclusion_proof(bundle.entry));
  }
  {
    Bundle bundle = happy();
    bundle.entry.integrated_time = *bundle.entry.integrated_time + 1;
    EXPECT_FALSE(verify_signed_entry_timestamp(bundle.entry, rekor()));
  }
  {
    Bundle bundle = happy();
    // The tree size line of the note: the log's signature no longer covers it.
    auto& note = bundle.entry.proof.checkpoint;
    const auto line = note.find('\n') + 1;
    note[line] = note[line] == '9' ? '8' : '9';
    auto result = verify_checkpoint(bundle.entry, rekor());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message, "checkpoint: signature is invalid");
  }
}

TEST(VerifyLogEntry, CheckpointSignatureFromAnotherKeyIsNotEnough) {
  const Bundle bundle = happy();
  // The Rekor v2 key has another hint: no line of the note is its signature.
  auto result = verify_checkpoint(bundle.entry, production_trusted_root().tlogs[1]);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "checkpoint: no signature from the log's key");
}

TEST(VerifyLogEntry, BodyMustDescribeThisSignatureAndArtifact) {
  const Bundle bundle = happy();
  const std::string artifact = test::conformance_file("a.txt");
  EXPECT_TRUE(check_hashedrekord_body(bundle.entry, sha256(artifact), *bundle.signature,
                                      bundle.leaf.get()));
  EXPECT_FALSE(check_hashedrekord_body(bundle.entry, sha256(artifact + "x"), *bundle.signature,
                                       bundle.leaf.get()));
  std::string signature = *bundle.signature;
  signature.back() ^= 1;
  EXPECT_FALSE(check_hashedrekord_body(bundle.entry, sha256(artifact), signature,
                                       bundle.leaf.get()));
}

TEST(VerifyLogEntry, CheckpointSignatureLinesAreNameAndSignatureOnly) {
  Bundle bundle = happy();
  auto& note = bundle.entry.proof.checkpoint;
  // "— rekor.sigstore.dev SIG" becomes "— rekor.sigstore.dev - 1 SIG": a name with spaces is
  // no signature line for sigstore's parser, so the log's signature is not found.
  const auto dash = note.find("\xE2\x80\x94 ");
  ASSERT_NE(dash, std::string::npos);
  const auto name_end = note.find(' ', dash + 4);
  note.insert(name_end, " - 1");
  auto result = verify_checkpoint(bundle.entry, rekor());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "checkpoint: no signature from the log's key");

  // A signature of fewer than five bytes is malformed, not skipped.
  Bundle short_signature = happy();
  auto& text = short_signature.entry.proof.checkpoint;
  text = text.substr(0, text.find("\xE2\x80\x94 ")) + "\xE2\x80\x94 rekor.sigstore.dev AAAA\n";
  EXPECT_EQ(verify_checkpoint(short_signature.entry, rekor()).error().message,
            "checkpoint: malformed note: signature contains too few bytes");
}
