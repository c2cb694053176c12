// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_transport.hpp"

namespace kernelhub::hub {
namespace {

using nlohmann::json;
using testing::FakeTransport;

using Fixture = testing::FakeHub;

using testing::kernel_repo;

json listed(long num) {
  return {{"num", num},
          {"title", "t" + std::to_string(num)},
          {"status", "open"},
          {"isPullRequest", true},
          {"author", {{"name", "me"}}},
          {"createdAt", "2026-01-01T00:00:00.000Z"}};
}

// Kernel repositories' discussions are at /api/kernels/..., which huggingface_hub 2.4.0
// refuses to call; every page is read while start + len < count.
TEST(HubClientDiscussions, ListReadsEveryPageOfAKernelRepository) {
  Fixture f;
  json first = {{"discussions", json::array({listed(3), listed(2)})}, {"count", 3}, {"start", 0}};
  json second = {{"discussions", json::array({listed(1)})}, {"count", 3}, {"start", 2}};
  f.transport->push(200, {}, first.dump());
  f.transport->push(200, {}, second.dump());
  const auto all = f.client().list_discussions(kernel_repo(), "pull_request", "open");
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 3U);
  EXPECT_EQ((*all)[0].num, 3);
  EXPECT_EQ((*all)[2].title, "t1");
  EXPECT_TRUE((*all)[2].is_pull_request);
  EXPECT_EQ((*all)[0].author, "me");
  ASSERT_EQ(f.transport->requests().size(), 2U);
  EXPECT_EQ(f.transport->requests()[0].url,
            "http://hub:8080/api/kernels/org/relu/discussions?p=0&type=pull_request&status=open");
  EXPECT_EQ(f.transport->requests()[1].url,
            "http://hub:8080/api/kernels/org/relu/discussions?p=1&type=pull_request&status=open");
}

TEST(HubClientDiscussions, ListStopsOnAnEmptyPage) {
  Fixture f;
  f.transport->push(200, {}, R"({"discussions":[],"count":7,"start":0})");
  const auto all = f.client().list_discussions(kernel_repo(), "", "");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->empty());
  EXPECT_EQ(f.transport->requests().size(), 1U);
}

TEST(HubClientDiscussions, DetailsAskForTheDiffAndReadEvents) {
  Fixture f;
  json details = listed(4);
  details["changes"] = {{"base", "refs/heads/v1"}};
  details["filesWithConflicts"] = json::array({"README.md"});
  details["diff"] = "diff --git a/x b/x\n";
  details["events"] = json::array(
      {{{"id", "e1"}, {"type", "comment"}, {"author", {{"name", "me"}}},
        {"data", {{"latest", {{"raw", "please"}}}, {"hidden", false}}}},
       {{"id", "e2"}, {"type", "commit"}, {"data", {{"subject", "Upload"}, {"oid", "abc"}}}}});
  f.transport->push(200, {}, details.dump());
  const auto got = f.client().discussion_details(kernel_repo(), 4);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(f.transport->requests()[0].url, "http://hub:8080/api/kernels/org/relu/discussions/4?diff=1");
  EXPECT_EQ(got->target_branch, "refs/heads/v1");
  EXPECT_EQ(got->conflicting_files, std::vector<std::string>{"README.md"});
  EXPECT_EQ(got->diff, "diff --git a/x b/x\n");
  ASSERT_EQ(got->events.size(), 2U);
  EXPECT_EQ(got->events[0].text, "please");
  EXPECT_EQ(got->events[1].oid, "abc");
  EXPECT_EQ(got->events[1].author, "");
}

TEST(HubClientDiscussions, WritesPostTheHubsBodiesOnceAndReportErrors) {
  Fixture f;
  f.transport->push(200, {}, R"({"newMessage":{"id":"c","type":"comment","data":{"latest":{"raw":"ok"},"hidden":false}}})");
  f.transport->push(200, {}, R"({"newStatus":{"id":"s","type":"status-change","data":{"status":"closed"}}})");
  f.transport->push(409, {}, R"({"error":"pull request #2 conflicts with \"refs/heads/v1\" in \"README.md\""})");
  auto client = f.client();
  const auto comment = client.comment_discussion(kernel_repo(), 2, "ok");
  ASSERT_TRUE(comment);
  EXPECT_EQ(comment->text, "ok");
  const auto closed = client.change_discussion_status(kernel_repo(), 2, "closed", "stale");
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->text, "closed");
  const auto merged = client.merge_pull_request(kernel_repo(), 2);
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error().status, 409);
  EXPECT_NE(merged.error().message.find("README.md"), std::string::npos);
  const auto& requests = f.transport->requests();
  ASSERT_EQ(requests.size(), 3U);  // the 409 is not retried
  EXPECT_EQ(requests[0].url, "http://hub:8080/api/kernels/org/relu/discussions/2/comment");
  EXPECT_EQ(json::parse(requests[0].body), json({{"comment", "ok"}}));
  EXPECT_EQ(json::parse(requests[1].body), json({{"status", "closed"}, {"comment", "stale"}}));
  EXPECT_EQ(requests[2].url, "http://hub:8080/api/kernels/org/relu/discussions/2/merge");
  EXPECT_EQ(json::parse(requests[2].body), json::object());
}

}  // namespace
}  // namespace kernelhub::hub
