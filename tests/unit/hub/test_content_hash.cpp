// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/content_hash.hpp>

#include <fstream>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

TEST(ContentHash, GitBlobSha1MatchesGit) {
  // `printf 'hello\n' | git hash-object --stdin`, and the empty blob.
  EXPECT_EQ(git_blob_sha1("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(git_blob_sha1(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

TEST(ContentHash, Sha256) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(ContentHash, FilesHashLikeTheirContent) {
  std::string content(3 << 20, 'x');
  content += "tail";
  std::ofstream("big.bin", std::ios::binary) << content;
  EXPECT_EQ(*git_blob_sha1_of_file("big.bin"), git_blob_sha1(content));
  EXPECT_EQ(*sha256_of_file("big.bin"), sha256_hex(content));
  EXPECT_FALSE(sha256_of_file("missing.bin"));
}

TEST(ContentHash, StreamingHashInPiecesMatchesTheWholeContent) {
  std::string content(3 << 20, 'y');
  content += "tail";
  StreamingHash sha1(StreamingHash::Kind::git_blob_sha1, content.size());
  StreamingHash sha256(StreamingHash::Kind::sha256, content.size());
  for (std::size_t at = 0; at < content.size(); at += 100'003) {
    const auto piece = std::string_view(content).substr(at, 100'003);
    sha1.update(piece);
    sha256.update(piece);
  }
  EXPECT_EQ(sha1.hex(), git_blob_sha1(content));
  EXPECT_EQ(sha256.hex(), sha256_hex(content));
  StreamingHash empty(StreamingHash::Kind::git_blob_sha1, 0);
  EXPECT_EQ(empty.hex(), git_blob_sha1(""));
}

TEST(ContentHash, EtagsNameTheirHashByLength) {
  EXPECT_EQ(StreamingHash::kind_of_etag(std::string(40, 'a')), StreamingHash::Kind::git_blob_sha1);
  EXPECT_EQ(StreamingHash::kind_of_etag(std::string(64, '0')), StreamingHash::Kind::sha256);
  // A CDN's md5, upper case hex, or a sha with a quote left on: nothing to check against.
  EXPECT_FALSE(StreamingHash::kind_of_etag(std::string(32, 'a')));
  EXPECT_FALSE(StreamingHash::kind_of_etag(std::string(64, 'A')));
  EXPECT_FALSE(StreamingHash::kind_of_etag("\"" + std::string(40, 'a') + "\""));
}

TEST(ContentHash, Base64) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

TEST(ContentHash, Base64AcrossPieces) {
  // Longer than one 3 MiB piece and not a multiple of 3: padding only at the very end.
  const std::string bytes((3 << 20) + 4, 'a');
  const std::string encoded = base64_encode(bytes);
  EXPECT_EQ(encoded.size(), 4 * ((bytes.size() + 2) / 3));
  EXPECT_EQ(encoded.find('='), encoded.size() - 2);
  EXPECT_EQ(encoded.substr(0, 8), "YWFhYWFh");
}

}  // namespace
}  // namespace kernelhub::hub
