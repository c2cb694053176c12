// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/error_mapping.hpp>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

HttpResponse response(long status, std::vector<std::pair<std::string, std::string>> headers,
                      std::string body = {}) {
  HttpResponse r;
  r.status = status;
  for (auto& [name, value] : headers) {
    r.headers.add(name, value);
  }
  r.body = std::move(body);
  return r;
}

TEST(ErrorMapping, ErrorCodeDecidesBeforeStatus) {
  EXPECT_EQ(error_from_response(response(404, {{"X-Error-Code", "RevisionNotFound"}}), "x").kind,
            ErrorKind::revision_not_found);
  EXPECT_EQ(error_from_response(response(404, {{"x-error-code", "EntryNotFound"}}), "x").kind,
            ErrorKind::entry_not_found);
  EXPECT_EQ(error_from_response(response(401, {{"X-Error-Code", "RepoNotFound"}}), "x").kind,
            ErrorKind::repo_not_found);
  EXPECT_EQ(error_from_response(response(403, {{"X-Error-Code", "GatedRepo"}}), "x").kind,
            ErrorKind::gated_repo);
}

TEST(ErrorMapping, StatusWithoutCode) {
  EXPECT_EQ(error_from_response(response(400, {}), "x").kind, ErrorKind::bad_request);
  EXPECT_EQ(error_from_response(response(401, {}), "x").kind, ErrorKind::unauthorized);
  EXPECT_EQ(error_from_response(response(403, {}), "x").kind, ErrorKind::forbidden);
  EXPECT_EQ(error_from_response(response(409, {}), "x").kind, ErrorKind::conflict);
  EXPECT_EQ(error_from_response(response(412, {}), "x").kind, ErrorKind::precondition_failed);
  EXPECT_EQ(error_from_response(response(404, {}), "x").kind, ErrorKind::http_status);
  EXPECT_EQ(error_from_response(response(503, {}), "x").kind, ErrorKind::http_status);
}

TEST(ErrorMapping, MessageJoinsHeaderAndBodyAndKeepsRepoCommit) {
  const auto error = error_from_response(
      response(404,
               {{"X-Error-Code", "EntryNotFound"},
                {"X-Error-Message", "no such file"},
                {"X-Repo-Commit", std::string(40, 'a')}},
               R"({"error": "no such file", "errors": [{"message": "second"}]})"),
      "\"a.txt\" in o/k");
  EXPECT_EQ(error.message, "\"a.txt\" in o/k: file not found: no such file; second");
  EXPECT_EQ(error.repo_commit, std::string(40, 'a'));
  EXPECT_EQ(error.status, 404);
}

TEST(ErrorMapping, ErrorListBody) {
  const auto error = error_from_response(response(400, {}, R"({"error": ["a", "b"]})"), "w");
  EXPECT_EQ(error.message, "w: HTTP 400: a; b");
}

}  // namespace
}  // namespace kernelhub::hub
