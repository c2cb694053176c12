// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/lfs_batch.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_transport.hpp"

namespace kernelhub::hub {
namespace {

using nlohmann::json;

const std::string k_oid = std::string(64, 'a');

using testing::kernel_repo;

LfsBatchAnswer parsed(const json& answer) {
  auto result = parse_lfs_batch_answer(answer.dump(), "test");
  EXPECT_TRUE(result) << result.error().message;
  return result ? *result : LfsBatchAnswer{};
}

json object_with_upload(json upload, std::uint64_t size = 10) {
  return json{{"oid", k_oid}, {"size", size}, {"actions", {{"upload", std::move(upload)}}}};
}

TEST(LfsBatch, UrlIsTheRepoGitPathWithTheTypePrefix) {
  EXPECT_EQ(lfs_batch_url("http://hub:8080", kernel_repo()),
            "http://hub:8080/kernels/org/relu.git/info/lfs/objects/batch");
  EXPECT_EQ(lfs_batch_url("https://huggingface.co", RepoRef{*RepoId::parse("org/m"), RepoType::model}),
            "https://huggingface.co/org/m.git/info/lfs/objects/batch");
}

TEST(LfsBatch, UploadBodyHasHuggingfaceHubsFields) {
  const auto body = json::parse(lfs_upload_batch_body({{k_oid, 12}, {std::string(64, 'b'), 0}}, "v1"));
  EXPECT_EQ(body["operation"], "upload");
  EXPECT_EQ(body["transfers"], json::array({"basic", "multipart"}));
  EXPECT_EQ(body["hash_algo"], "sha256");
  EXPECT_EQ(body["ref"], json({{"name", "v1"}}));
  ASSERT_EQ(body["objects"].size(), 2u);
  EXPECT_EQ(body["objects"][0], json({{"oid", k_oid}, {"size", 12}}));
  EXPECT_EQ(body["objects"][1]["size"], 0);
  // No revision, no ref (post_lfs_batch_info adds it only for a revision).
  EXPECT_FALSE(json::parse(lfs_upload_batch_body({{k_oid, 1}}, "")).contains("ref"));
}

TEST(LfsBatch, ParseRefusesMalformedAnswers) {
  for (const char* text : {
           R"({})",
           R"({"objects": {}})",
           R"({"objects": [{"size": 1}]})",
           R"({"objects": [{"oid": "x", "size": "1"}]})",
           R"({"objects": [{"oid": "x", "size": -1}]})",
           R"({"objects": [{"oid": "x", "size": 1, "actions": {"upload": {}}}]})",
           R"({"objects": [{"oid": "x", "size": 1, "actions": {"upload": {"href": "u", "header": []}}}]})",
           R"({"objects": [{"oid": "x", "size": 1, "actions": {"verify": {"href": 3}}}]})",
           R"({"objects": [{"oid": "x", "size": 1, "error": {"message": "m"}}]})",
           "not json",
       }) {
    auto result = parse_lfs_batch_answer(text, "batch");
    ASSERT_FALSE(result) << text;
    EXPECT_EQ(result.error().kind, ErrorKind::invalid_response) << text;
  }
}

TEST(LfsBatch, ParseKeepsErrorsAndActions) {
  const auto answer = parsed(json{
      {"transfer", "basic"},
      {"objects",
       {{{"oid", "x"}, {"size", 1}, {"error", {{"code", 422}, {"message", "too large"}}}},
        {{"oid", k_oid},
         {"size", 10},
         {"actions", {{"upload", {{"href", "http://up"}}}, {"verify", {{"href", "http://v"}}}}}}}}});
  EXPECT_EQ(answer.transfer, "basic");
  ASSERT_EQ(answer.objects.size(), 2u);
  ASSERT_TRUE(answer.objects[0].error);
  EXPECT_EQ(answer.objects[0].error->first, 422);
  EXPECT_EQ(answer.objects[0].error->second, "too large");
  EXPECT_EQ(answer.objects[1].upload->href, "http://up");
  EXPECT_EQ(answer.objects[1].verify->href, "http://v");
}

TEST(LfsBatch, NoActionsMeansTheServerHasTheObject) {
  const auto answer = parsed(json{{"objects", {{{"oid", k_oid}, {"size", 10}}}}});
  auto plan = plan_lfs_upload(answer, answer.objects[0], {k_oid, 10}, "http://hub");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->transfer, LfsUploadPlan::Transfer::already_present);
}

// The action's headers go with the PUT, except those that describe the body, which the
// transport sets from the bytes it sends.
TEST(LfsBatch, BasicKeepsTheActionHeaders) {
  const auto answer = parsed(json{
      {"objects", {object_with_upload({{"href", "http://cdn/put?sig=1"}, {"header", {{"X-Amz-Acl", "private"}, {"X-N", 5}, {"content-length", "1"}, {"Transfer-Encoding", "chunked"}}}})}}});
  auto plan = plan_lfs_upload(answer, answer.objects[0], {k_oid, 10}, "http://hub");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->transfer, LfsUploadPlan::Transfer::basic);
  EXPECT_EQ(plan->href, "http://cdn/put?sig=1");
  const std::vector<std::pair<std::string, std::string>> headers{{"X-Amz-Acl", "private"}, {"X-N", "5"}};
  EXPECT_EQ(plan->headers, headers);
}

TEST(LfsBatch, BasicRefusesHeadersThatAreNotHeaders) {
  for (const json& header : {json{{"X", "a\r\nInjected: 1"}}, json{{"Bad Name", "v"}}, json{{"X", json::array()}}}) {
    const auto answer = parsed(json{{"objects", {object_with_upload({{"href", "http://cdn"}, {"header", header}})}}});
    auto plan = plan_lfs_upload(answer, answer.objects[0], {k_oid, 10}, "http://hub");
    ASSERT_FALSE(plan) << header.dump();
    EXPECT_EQ(plan.error().kind, ErrorKind::invalid_response);
  }
}

TEST(LfsBatch, MultipartPartsInNumericOrder) {
  // 25 bytes in chunks of 10: three parts; keys sort as numbers (lfs.py: int(part_num)).
  const auto answer = parsed(json{
      {"objects",
       {object_with_upload({{"href", "http://hub/complete"},
                            {"header", {{"chunk_size", "10"}, {"3", "http://s3/p3"}, {"01", "http://s3/p1"}, {"2", "http://s3/p2"}}}},
                           25)}}});
  auto plan = plan_lfs_upload(answer, answer.objects[0], {k_oid, 25}, "http://hub");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->transfer, LfsUploadPlan::Transfer::multipart);
  EXPECT_EQ(plan->chunk_size, 10u);
  EXPECT_EQ(plan->href, "http://hub/complete");
  EXPECT_EQ(plan->part_urls, (std::vector<std::string>{"http://s3/p1", "http://s3/p2", "http://s3/p3"}));
  EXPECT_TRUE(plan->headers.empty());
}

TEST(LfsBatch, MultipartNeedsOnePartUrlPerChunk) {
  for (const json& header : {json{{"chunk_size", 10}, {"1", "u"}, {"2", "u"}},
                             json{{"chunk_size", 10}, {"1", "u"}, {"2", "u"}, {"3", "u"}, {"4", "u"}},
                             json{{"chunk_size", 0}, {"1", "u"}},
                             json{{"chunk_size", "ten"}, {"1", "u"}},
                             json{{"chunk_size", 10}, {"1", "u"}, {"2", "u"}, {"3", 7}}}) {
    const auto answer = parsed(json{{"objects", {object_with_upload({{"href", "http://c"}, {"header", header}}, 25)}}});
    auto plan = plan_lfs_upload(answer, answer.objects[0], {k_oid, 25}, "http://hub");
    ASSERT_FALSE(plan) << header.dump();
    EXPECT_EQ(plan.error().kind, ErrorKind::invalid_response);
  }
}

TEST(LfsBatch, RefusesATransferNotAskedFor) {
  const auto answer = parsed(json{{"transfer", "xet"}, {"objects", {object_with_upload({{"href", "http://c"}})}}});
  auto plan = plan_lfs_upload(answer, answer.objects[0], {k_oid, 10}, "http://hub");
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("\"xet\""), std::string::npos);
}

TEST(LfsBatch, RefusesAnAnswerForAnotherSize) {
  const auto answer = parsed(json{{"objects", {object_with_upload({{"href", "http://c"}}, 11)}}});
  EXPECT_FALSE(plan_lfs_upload(answer, answer.objects[0], {k_oid, 10}, "http://hub"));
}

TEST(LfsBatch, CompletionAndVerifyBodies) {
  const auto completion = json::parse(lfs_completion_body(k_oid, {"\"e1\"", "\"e2\""}));
  EXPECT_EQ(completion, json({{"oid", k_oid},
                              {"parts", {{{"partNumber", 1}, {"etag", "\"e1\""}}, {{"partNumber", 2}, {"etag", "\"e2\""}}}}}));
  EXPECT_EQ(json::parse(lfs_verify_body({k_oid, 7})), json({{"oid", k_oid}, {"size", 7}}));
}

TEST(LfsBatch, HubUrlsGoToACustomEndpoint) {
  EXPECT_EQ(fix_hub_endpoint_in_url("https://huggingface.co/org/m.git/info/lfs/complete/1?x=1", "http://mirror:1"),
            "http://mirror:1/org/m.git/info/lfs/complete/1?x=1");
  EXPECT_EQ(fix_hub_endpoint_in_url("https://hub-ci.huggingface.co/v", "http://mirror:1"), "http://mirror:1/v");
  EXPECT_EQ(fix_hub_endpoint_in_url("https://huggingface.co/v", "https://huggingface.co"), "https://huggingface.co/v");
  EXPECT_EQ(fix_hub_endpoint_in_url("https://s3.amazonaws.com/b?u=https://huggingface.co/", "http://mirror:1"),
            "https://s3.amazonaws.com/b?u=https://huggingface.co/");
  EXPECT_EQ(fix_hub_endpoint_in_url("https://huggingface.com/v", "http://mirror:1"), "https://huggingface.com/v");
}

}  // namespace
}  // namespace kernelhub::hub
