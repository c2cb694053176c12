// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/commit_request.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

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

TEST(CommitRequest, LfsRefusalSaysWhatToDoInstead) {
  const auto request = parse_commit_request(
      R"({"key": "header", "value": {"summary": "s"}})"
      "\n"
      R"({"key": "lfsFile", "value": {"path": "w.bin", "algo": "sha256", "oid": "00", "size": 1}})");
  ASSERT_FALSE(request);
  EXPECT_NE(request.error().message.find("regular"), std::string::npos);
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
