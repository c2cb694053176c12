// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/commit_request.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace kernelhub::server {

namespace {

// Collects what the parser streams, and how it was cut.
struct StreamLog {
  std::uint64_t announced = 0;
  std::string bytes;
  std::size_t writes = 0;
  std::size_t largest_write = 0;
  bool finished = false;
};

class FakeStream final : public BlobStream {
 public:
  explicit FakeStream(StreamLog& log) : m_log(log) {}
  HubExpected<void> write(std::string_view bytes) override {
    m_log.bytes.append(bytes);
    ++m_log.writes;
    m_log.largest_write = std::max(m_log.largest_write, bytes.size());
    return {};
  }
  HubExpected<std::string> finish() override {
    m_log.finished = true;
    return std::string(40, 'b');
  }

 private:
  StreamLog& m_log;
};

// `count` bytes of a repeating non-text pattern and its base64.
std::pair<std::string, std::string> large_content(std::size_t count) {
  static constexpr char k_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(count, '\0');
  for (std::size_t i = 0; i < count; ++i) {
    bytes[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  }
  std::string text;
  for (std::size_t i = 0; i < count; i += 3) {
    const std::size_t n = std::min<std::size_t>(3, count - i);
    std::uint32_t quantum = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      quantum = (quantum << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    }
    for (std::size_t j = 0; j < 4; ++j) {
      text += j <= n ? k_alphabet[(quantum >> (18 - 6 * j)) & 0x3f] : '=';
    }
  }
  return {bytes, text};
}

std::string file_line(const std::string& base64) {
  return R"({"key": "file", "value": {"content": ")" + base64 +
         R"(", "path": "big.bin", "encoding": "base64"}})";
}

const std::string k_header = R"({"key": "header", "value": {"summary": "s"}})";

}  // namespace

TEST(CommitRequest, LargeContentIsStreamedInBlocksAndItsBytesReleased) {
  const auto [bytes, text] = large_content(10'000'001);  // 13.3 MB of base64, padded
  const std::string body = k_header + "\n" + file_line(text) + "\n";
  StreamLog log;
  std::vector<std::string_view> released;
  CommitSinks sinks;
  sinks.blob = [](std::string_view) { return HubExpected<std::string>(std::string(40, 'a')); };
  sinks.open_stream = [&log](std::uint64_t size) -> HubExpected<std::unique_ptr<BlobStream>> {
    log.announced = size;
    return std::make_unique<FakeStream>(log);
  };
  sinks.release = [&released](std::string_view part) { released.push_back(part); };
  const auto request = parse_commit_request(body, sinks);
  ASSERT_TRUE(request) << request.error().message;
  ASSERT_EQ(request->operations.size(), 1u);
  EXPECT_EQ(request->operations[0].blob_id, std::string(40, 'b'));
  EXPECT_EQ(request->operations[0].size, bytes.size());
  EXPECT_TRUE(request->operations[0].content.empty());
  EXPECT_EQ(log.announced, bytes.size());
  EXPECT_TRUE(log.finished);
  EXPECT_TRUE(log.bytes == bytes);
  // Never the whole file in one piece, and every released part lies inside the body.
  EXPECT_GT(log.writes, 2u);
  EXPECT_LT(log.largest_write, bytes.size() / 2);
  ASSERT_FALSE(released.empty());
  std::size_t released_bytes = 0;
  for (const auto part : released) {
    EXPECT_GE(part.data(), body.data());
    EXPECT_LE(part.data() + part.size(), body.data() + body.size());
    released_bytes += part.size();
  }
  // The content is passed over at least twice (the scan and the decode), released both times.
  EXPECT_GE(released_bytes, text.size());
}

TEST(CommitRequest, StreamedContentIsCheckedAsStrictlyAsAWholeOne) {
  auto [bytes, text] = large_content(9'000'000);
  // Padding at the end of a block that is not the last: valid-looking per block, not whole.
  std::string padded_mid = text;
  padded_mid[(std::size_t{4} << 20) - 1] = '=';
  std::string bad_char = text;
  bad_char[text.size() / 2] = '!';
  for (const std::string& bad : {padded_mid, bad_char, text.substr(1)}) {
    const std::string body = k_header + "\n" + file_line(bad) + "\n";
    StreamLog log;
    CommitSinks sinks;
    sinks.blob = [](std::string_view) { return HubExpected<std::string>(std::string(40, 'a')); };
    sinks.open_stream = [&log](std::uint64_t) -> HubExpected<std::unique_ptr<BlobStream>> {
      return std::make_unique<FakeStream>(log);
    };
    const auto streamed = parse_commit_request(body, sinks);
    const auto whole = parse_commit_request(body);
    ASSERT_FALSE(streamed);
    ASSERT_FALSE(whole);
    EXPECT_EQ(streamed.error().status, 400);
    EXPECT_EQ(streamed.error().message, whole.error().message);
    EXPECT_FALSE(log.finished);
  }
}

TEST(CommitRequest, ParsesHeaderFilesAndDeletions) {
  const std::string body =
      R"({"key": "header", "value": {"summary": "up", "description": "d", "parentCommit": "abcdef1"}})"
      "\n"
      R"({"key": "file", "value": {"content": "aGVsbG8=", "path": "dir/a b.txt", "encoding": "base64"}})"
      "\r\n\n"
      R"({"key": "deletedFile", "value": {"path": "old.txt"}})"
      "\n"
      R"({"key": "deletedFolder", "value": {"path": "build/x/"}})"
      "\n";
  const auto request = parse_commit_request(body);
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->summary, "up");
  EXPECT_EQ(request->description, "d");
  EXPECT_EQ(request->parent_commit, "abcdef1");
  ASSERT_EQ(request->operations.size(), 3u);
  EXPECT_EQ(request->operations[0].kind, CommitOperation::Kind::add_file);
  EXPECT_EQ(request->operations[0].path, "dir/a b.txt");
  EXPECT_EQ(request->operations[0].content, "hello");
  EXPECT_EQ(request->operations[1].kind, CommitOperation::Kind::delete_file);
  EXPECT_EQ(request->operations[2].kind, CommitOperation::Kind::delete_folder);
  EXPECT_EQ(request->operations[2].path, "build/x");
}

TEST(CommitRequest, RefusesMalformedBodies) {
  const std::string header = R"({"key": "header", "value": {"summary": "s"}})"
                             "\n";
  const std::vector<std::string> bad = {
      "",
      "not json\n",
      R"({"key": "file", "value": {"path": "a", "content": ""}})",  // no header first
      header + "{\"key\": \"file\"",                                 // truncated line
      header + R"({"key": "file", "value": {"path": "../x", "content": ""}})",
      header + R"({"key": "file", "value": {"path": "a", "content": "@@@@"}})",
      header + R"({"key": "file", "value": {"path": "a", "content": "aGk", "encoding": "base64"}})",
      header + R"({"key": "file", "value": {"path": "a", "content": "x", "encoding": "utf-8"}})",
      header + R"({"key": "lfsFile", "value": {"path": "w.bin", "algo": "sha256", "oid": "00", "size": 1}})",
      header + R"({"key": "mystery", "value": {}})",
      header + R"({"key": "deletedFile", "value": {"path": 3}})",
      header + header,
  };
  for (const auto& body : bad) {
    const auto request = parse_commit_request(body);
    EXPECT_FALSE(request) << body;
    if (!request) {
      EXPECT_EQ(request.error().status, 400) << body;
    }
  }
}

TEST(CommitRequest, LfsFileLinesAreParsedAndMalformedOnesNamed) {
  const std::string oid(64, 'a');
  const auto request = parse_commit_request(
      R"({"key": "header", "value": {"summary": "s"}})"
      "\n"
      R"({"key": "lfsFile", "value": {"path": "w.bin", "algo": "sha256", "oid": ")" + oid +
      R"(", "size": 5}})"
      "\n"
      R"({"key": "lfsFile", "value": {"path": "copy.bin", "algo": "sha256", "oid": ")" + oid +
      R"("}})");
  ASSERT_TRUE(request) << request.error().message;
  ASSERT_EQ(request->operations.size(), 2u);
  EXPECT_EQ(request->operations[0].kind, CommitOperation::Kind::add_lfs_file);
  EXPECT_EQ(request->operations[0].lfs_oid, oid);
  EXPECT_EQ(request->operations[0].size, 5u);
  EXPECT_EQ(request->operations[1].size, 0u);  // a copy names no size
  for (const std::string& bad : std::vector<std::string>{
           R"("algo": "sha256", "oid": "00", "size": 1)", R"("algo": "md5", "oid": ")" + oid + "\"",
        R"("oid": ")" + std::string(64, 'A') + "\"", R"("oid": ")" + oid + R"(", "size": -1)"}) {
    const auto refused = parse_commit_request(
        R"({"key": "header", "value": {"summary": "s"}})"
        "\n"
        R"({"key": "lfsFile", "value": {"path": "w.bin", )" + bad + "}}");
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("commit line 2: lfsFile \"w.bin\""), std::string::npos)
        << refused.error().message;
  }
}

TEST(Base64, DecodesPaddingAndBinary) {
  EXPECT_EQ(decode_base64(""), "");
  EXPECT_EQ(decode_base64("YQ=="), "a");
  EXPECT_EQ(decode_base64("YWI="), "ab");
  EXPECT_EQ(decode_base64("YWJj"), "abc");
  EXPECT_EQ(decode_base64("AAEC/w=="), std::string("\x00\x01\x02\xff", 4));
  EXPECT_FALSE(decode_base64("YQ="));
  EXPECT_FALSE(decode_base64("Y!=="));
}

TEST(CommitRequest, Base64IsDecodedStrictly) {
  EXPECT_EQ(decode_base64(""), "");
  EXPECT_EQ(decode_base64("QQ=="), "A");
  EXPECT_EQ(decode_base64("QUI="), "AB");
  EXPECT_EQ(decode_base64("QUJD"), "ABC");
  EXPECT_EQ(decode_base64("+/+/"), std::string("\xfb\xff\xbf"));
  // Issue 12 item 4: each was accepted (or underflowed) by the old decoder.
  for (const std::string bad : {"====", "A===", "QQ==QUJD", "Q===", "=QQQ", "QR==", "QUJ=x",
                                "QUI", "QU I=", "QUI=\n", "QUJD\r\n", "QU-_", "Q*=="}) {
    EXPECT_EQ(decode_base64(bad), std::nullopt) << bad;
  }
}

TEST(CommitRequest, ContentIsReadInPlaceOrThroughJsonAlike) {
  // The content of a plain line is decoded from the body's own bytes (no JSON string built);
  // escapes, repeated keys and odd spacing take the JSON parser's way, with the same result.
  const std::string header = R"({"key": "header", "value": {"summary": "s"}})"
                             "\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"key": "file", "value": {"path": "a", "content": "QUJD"}})", "ABC"},
      {R"( { "value" : { "content" : "QUJD" , "path" : "a" } , "key" : "file" } )", "ABC"},
      {R"({"key": "file", "value": {"path": "a", "content": "+\/+\/"}})", "\xfb\xff\xbf"},
      {R"({"key": "file", "value": {"path": "a", "content": "QQ==", "content": "QUI="}})", "AB"},
      {R"({"key": "file", "value": {"path": "a", "n": [1, {"x": "}"}], "content": "QUI="}})", "AB"},
      {R"({"key": "fi\u006ce", "value": {"path": "a", "content": "QQ=="}})", "A"},
  };
  for (const auto& [line, expected] : cases) {
    const auto request = parse_commit_request(header + line + "\n");
    ASSERT_TRUE(request) << line << ": " << request.error().message;
    ASSERT_EQ(request->operations.size(), 1u) << line;
    EXPECT_EQ(request->operations[0].content, expected) << line;
  }
  for (const std::string bad : {
           R"({"key": "file", "value": {"path": "a", "content": "QUJD"}} x)",
           R"({"key": "file", "value": {"path": "a", "content": "QUJD"})",
           R"({"key": "file", "value": {"path": "a", "content": "QUJD", }})",
           R"({"key": "file", "value": {"path": "a", "content": "QU\JD"}})",
           R"({"key": "file", "value": {"path": "a", "content": "QUJD"}, "value": {}})",
       }) {
    EXPECT_FALSE(parse_commit_request(header + bad + "\n")) << bad;
  }
}

}  // namespace kernelhub::server
