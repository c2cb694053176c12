// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/discussion_store.hpp>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(DiscussionStore, StartsEmptyAndRoundTripsAtomically) {
  fs::create_directory("repo.git");
  const DiscussionStore store("repo.git");
  auto all = store.load();
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_TRUE((*all)["discussions"].empty());
  EXPECT_EQ(next_discussion_number(*all), 1);

  (*all)["discussions"].push_back(new_discussion(1, "first", "kernelhub", std::nullopt));
  (*all)["discussions"].push_back(new_discussion(4, "pr", "kernelhub", "refs/heads/v1"));
  ASSERT_TRUE(store.save(*all));
  // Only the file itself: the temporary it was written through was renamed over it.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator("repo.git")) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"discussions.json"});

  auto again = store.load();
  ASSERT_TRUE(again);
  EXPECT_EQ(next_discussion_number(*again), 5);
  json* pr = find_discussion(*again, 4);
  ASSERT_NE(pr, nullptr);
  EXPECT_EQ((*pr)["status"], "draft");
  EXPECT_EQ((*pr)["isPullRequest"], true);
  EXPECT_EQ((*pr)["base"], "refs/heads/v1");
  EXPECT_EQ((*find_discussion(*again, 1))["status"], "open");
  EXPECT_EQ(find_discussion(*again, 2), nullptr);
}

TEST(DiscussionStore, ADamagedFileIsAServerErrorNamingIt) {
  fs::create_directory("repo.git");
  std::ofstream("repo.git/discussions.json") << "{\"discussions\": 3}";
  const auto loaded = DiscussionStore("repo.git").load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().status, 500);
  EXPECT_NE(loaded.error().message.find("discussions.json"), std::string::npos);
}

TEST(DiscussionStore, AnEntryReadersCannotUseIsRefusedAtLoad) {
  fs::create_directory("repo.git");
  // Readers index "events" and "author" unchecked: an entry without them must not load.
  std::ofstream("repo.git/discussions.json")
      << R"({"discussions": [{"num": 1, "author": {}, "events": []}, {"num": 2, "author": {}}]})";
  const auto loaded = DiscussionStore("repo.git").load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().status, 500);
  EXPECT_NE(loaded.error().message.find("entry 2"), std::string::npos) << loaded.error().message;
  EXPECT_NE(loaded.error().message.find("\"events\""), std::string::npos);
}

TEST(DiscussionEvents, HaveTheFieldsHuggingfaceHubReads) {
  json comment = comment_event("a <b> & \"c\"", "kernelhub");
  const std::string id = comment["id"];
  EXPECT_EQ(id.size(), 24u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(comment["type"], "comment");
  EXPECT_EQ(comment["author"]["name"], "kernelhub");
  EXPECT_EQ(std::string(comment["createdAt"]).size(), 24u);  // 2026-01-02T03:04:05.000Z
  EXPECT_EQ(comment["data"]["edited"], false);
  EXPECT_EQ(comment["data"]["hidden"], false);
  EXPECT_EQ(comment["data"]["latest"]["raw"], "a <b> & \"c\"");
  EXPECT_EQ(comment["data"]["latest"]["html"], "<p>a &lt;b&gt; &amp; &quot;c&quot;</p>");
  EXPECT_NE(comment_event("x", "k")["id"], comment_event("x", "k")["id"]);

  edit_comment(comment, "better", "kernelhub");
  EXPECT_EQ(comment["data"]["edited"], true);
  EXPECT_EQ(comment["data"]["numEdits"], 1);
  EXPECT_EQ(comment["data"]["latest"]["raw"], "better");
  ASSERT_EQ(comment["data"]["history"].size(), 1u);
  EXPECT_EQ(comment["data"]["history"][0]["raw"], "a <b> & \"c\"");
  EXPECT_EQ(comment["id"], id);

  hide_comment(comment, "kernelhub");
  EXPECT_EQ(comment["data"]["hidden"], true);
  EXPECT_EQ(comment["data"]["history"].size(), 0u);
  EXPECT_EQ(comment.dump().find("better"), std::string::npos);

  EXPECT_EQ(status_event("closed", "k")["data"]["status"], "closed");
  EXPECT_EQ(commit_event("msg", "abc", "k")["data"], json({{"subject", "msg"}, {"oid", "abc"}}));
  EXPECT_EQ(title_event("a", "b", "k")["data"], json({{"from", "a"}, {"to", "b"}}));
}

}  // namespace kernelhub::server
