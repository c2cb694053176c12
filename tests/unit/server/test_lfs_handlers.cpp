// SPDX-License-Identifier: Apache-2.0
// Git LFS through the router over a real store, without sockets: preupload's decision, the
// refusal of inline binaries, the batch API (basic and multipart), verify, lfsFile commits,
// the tree's lfs entries and the resolve redirect to the download URL (signed and expiring
// for private repositories).
#include <kernelhub/server/hub_router.hpp>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/lfs_grant.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/lfs_pointer.hpp>
#include <kernelhub/server/lfs_policy.hpp>

#include "server_test_support.hpp"

namespace kernelhub::server {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using testing::k_token;
constexpr const char* k_base = "http://127.0.0.1:9";

// sha256("hello lfs\n"), computed by `printf 'hello lfs\n' | sha256sum`.
constexpr const char* k_hello_oid =
    "4859402c258b836d02e955d1090e29f586e58b2040504d68afec3d8d43757bba";

std::string base64(std::string_view bytes) {
  static constexpr char k_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    out += {k_alphabet[(n >> 18) & 63], k_alphabet[(n >> 12) & 63], k_alphabet[(n >> 6) & 63],
            k_alphabet[n & 63]};
  }
  if (i + 1 == bytes.size()) {
    const auto n = static_cast<unsigned char>(bytes[i]) << 16;
    out += {k_alphabet[(n >> 18) & 63], k_alphabet[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {k_alphabet[(n >> 18) & 63], k_alphabet[(n >> 12) & 63], k_alphabet[(n >> 6) & 63],
            '='};
  }
  return out;
}

class LfsRouterTest : public ::testing::Test {
 protected:
  LfsRouterTest() : m_router(make_settings()) {}

  static ServerSettings make_settings() {
    ServerSettings settings;
    settings.root = fs::current_path() / "root";
    settings.tokens = {k_token};
    // Small parts, so a few bytes make a multipart upload.
    settings.storage.multipart_chunk_size = 4;
    return settings;
  }

  HttpResponse send(std::string method, std::string target, const std::string& body = "",
                    bool with_token = true, const std::string& body_file = "",
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = body;
    request.body_file = body_file;
    request.base_url = k_base;
    request.headers = std::move(headers);
    if (with_token) {
      request.headers.emplace_back("authorization", std::string("Bearer ") + k_token);
    }
    return m_router.handle(request);
  }

  // A PUT as the transport makes it: the body spooled to a file (after admit allowed it).
  HttpResponse put(const std::string& href, const std::string& bytes) {
    const std::string target = href.substr(std::string(k_base).size());
    HttpRequest head;
    head.method = "PUT";
    head.target = target;
    head.base_url = k_base;
    const auto plan = m_router.admit(head);
    if (!plan) {
      return error_response(plan.error());
    }
    EXPECT_EQ(plan->storage, HubRouter::BodyPlan::Storage::file);
    EXPECT_EQ(plan->limit, bytes.size());
    const fs::path file = fs::current_path() / ("spool-" + std::to_string(m_spooled++));
    std::ofstream(file, std::ios::binary) << bytes;
    return send("PUT", target, "", false, file.string());
  }

  static std::string header(const HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) {
        return value;
      }
    }
    return "";
  }

  void create(bool is_private = false) {
    const auto response = send("POST", "/api/repos/create",
                               json({{"name", "k"}, {"organization", "org"}, {"type", "kernel"},
                                     {"private", is_private}})
                                   .dump());
    ASSERT_EQ(response.status, 200) << response.body;
  }

  json preupload(const std::string& path, const std::string& bytes) {
    const json body = {{"files", {{{"path", path},
                                   {"size", bytes.size()},
                                   {"sample", base64(bytes.substr(0, 512))}}}}};
    const auto response = send("POST", "/api/kernels/org/k/preupload/main", body.dump());
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body)["files"][0];
  }

  HttpResponse commit(const std::vector<json>& lines) {
    std::string body = R"({"key": "header", "value": {"summary": "add"}})"
                       "\n";
    for (const auto& line : lines) {
      body += line.dump() + "\n";
    }
    return send("POST", "/api/kernels/org/k/commit/main", body);
  }

  static json file_line(const std::string& path, const std::string& bytes) {
    return {{"key", "file"},
            {"value", {{"path", path}, {"content", base64(bytes)}, {"encoding", "base64"}}}};
  }

  static json lfs_line(const std::string& path, const std::string& oid, std::uint64_t size) {
    return {{"key", "lfsFile"},
            {"value", {{"path", path}, {"algo", "sha256"}, {"oid", oid}, {"size", size}}}};
  }

  json batch(const std::string& operation, const std::string& oid, std::uint64_t size,
             std::vector<std::string> transfers = {"basic", "multipart"}, bool with_token = true,
             int expected_status = 200) {
    const json body = {{"operation", operation},
                       {"transfers", transfers},
                       {"objects", {{{"oid", oid}, {"size", size}}}},
                       {"hash_algo", "sha256"},
                       {"ref", {{"name", "main"}}}};
    const auto response =
        send("POST", "/kernels/org/k.git/info/lfs/objects/batch", body.dump(), with_token);
    EXPECT_EQ(response.status, expected_status) << response.body;
    if (response.status == 200) {
      EXPECT_EQ(response.content_type, "application/vnd.git-lfs+json");
    }
    return json::parse(response.body);
  }

  std::string path_of(const std::string& href) { return href.substr(std::string(k_base).size()); }

  fs::path store_dir() { return fs::current_path() / "root" / "kernels" / "org" / "k.git"; }

  std::string refs() { return send("GET", "/api/kernels/org/k/refs").body; }

  HubRouter m_router;
  int m_spooled = 0;
};

}  // namespace

TEST(LfsPointer, CanonicalTextRoundTripsAndNearMissesAreNotPointers) {
  const LfsPointer pointer{k_hello_oid, 10};
  const std::string text = lfs_pointer_text(pointer);
  EXPECT_EQ(text, std::string("version https://git-lfs.github.com/spec/v1\noid sha256:") +
                      k_hello_oid + "\nsize 10\n");
  const auto parsed = parse_lfs_pointer(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->oid, k_hello_oid);
  EXPECT_EQ(parsed->size, 10u);
  EXPECT_FALSE(parse_lfs_pointer(text.substr(0, text.size() - 1)));  // no final newline
  std::string upper = text;
  upper[60] = 'A';
  EXPECT_FALSE(parse_lfs_pointer(upper));
  EXPECT_FALSE(parse_lfs_pointer(std::string("version https://git-lfs.github.com/spec/v1\noid "
                                             "sha256:") +
                                 k_hello_oid + "\nsize 010\n"));
  EXPECT_FALSE(parse_lfs_pointer("hello\n"));
}

TEST(LfsPolicy, SizeBinaryAndAttributesDecideAndEmptyFilesStayInline) {
  StorageSettings storage;
  EXPECT_FALSE(decide_upload_mode(storage, 100, "plain text", false).lfs);
  EXPECT_TRUE(decide_upload_mode(storage, 100, std::string("ELF\0\1", 5), false).lfs);
  EXPECT_EQ(decide_upload_mode(storage, 100, std::string("ELF\0\1", 5), false).reason, "binary");
  EXPECT_TRUE(decide_upload_mode(storage, (10u << 20) + 1, "text", false).lfs);
  EXPECT_FALSE(decide_upload_mode(storage, 10u << 20, "text", false).lfs);
  EXPECT_TRUE(decide_upload_mode(storage, 5, "text", true).lfs);
  EXPECT_FALSE(decide_upload_mode(storage, 0, "", true).lfs);
  storage.binary_lfs_threshold = 1000;
  EXPECT_FALSE(decide_upload_mode(storage, 1000, std::string("\0", 1), false).lfs);
  storage.lfs_threshold.reset();
  EXPECT_FALSE(decide_upload_mode(storage, 1u << 30, std::string("\0", 1), true).lfs);
}

TEST(LfsGrant, SignatureBindsEveryFieldAndExpires) {
  const UrlSigner signer("key");
  const LfsGrant grant{LfsGrant::Action::upload, "kernels/org/k", k_hello_oid, 10, 0, 0, 1000, {}};
  const std::string query = grant_query(signer, grant);
  const auto target = parse_request_target("/x?" + query);
  ASSERT_TRUE(target);
  EXPECT_TRUE(check_grant(signer, LfsGrant::Action::upload, "kernels/org/k", k_hello_oid, 0,
                          *target, 999));
  EXPECT_EQ(check_grant(signer, LfsGrant::Action::upload, "kernels/org/k", k_hello_oid, 0,
                        *target, 1001)
                .error()
                .status,
            403);
  // Another repository, action, object or key: refused.
  EXPECT_FALSE(check_grant(signer, LfsGrant::Action::upload, "kernels/org/other", k_hello_oid, 0,
                           *target, 999));
  EXPECT_FALSE(check_grant(signer, LfsGrant::Action::download, "kernels/org/k", k_hello_oid, 0,
                           *target, 999));
  EXPECT_FALSE(check_grant(UrlSigner("other key"), LfsGrant::Action::upload, "kernels/org/k",
                           k_hello_oid, 0, *target, 999));
  // A larger size (a bigger body allowed) breaks the signature.
  std::string bigger = query;
  bigger.replace(0, bigger.find('&'), "size=11");
  EXPECT_FALSE(check_grant(signer, LfsGrant::Action::upload, "kernels/org/k", k_hello_oid, 0,
                           *parse_request_target("/x?" + bigger), 999));
}

TEST_F(LfsRouterTest, PreuploadMarksBinaryLargeAndTrackedFilesLfs) {
  create();
  EXPECT_EQ(preupload("README.md", "# hello\n")["uploadMode"], "regular");
  EXPECT_EQ(preupload("build/torch-cpu/_relu.so", std::string("\x7f" "ELF\0\0\0", 7))["uploadMode"],
            "lfs");
  EXPECT_EQ(preupload("empty.bin", "")["uploadMode"], "regular");
  // The Hub's default .gitattributes (written at create) tracks *.bin.
  EXPECT_EQ(preupload("weights.bin", "just text")["uploadMode"], "lfs");
  EXPECT_EQ(preupload("notes.txt", "just text")["shouldIgnore"], false);
}

TEST_F(LfsRouterTest, RegularCommitOfBinaryFilesIsRefusedNamingEachAndChangesNothing) {
  create();
  const std::string before = refs();
  const auto refused = commit({file_line("a.so", std::string("\x7f" "ELF\0\1", 6)),
                               file_line("ok.txt", "fine"),
                               file_line("b.so", std::string("\0\0", 2))});
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("binary"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("a.so (binary)"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("b.so (binary)"), std::string::npos) << refused.body;
  EXPECT_EQ(refused.body.find("ok.txt"), std::string::npos) << refused.body;
  EXPECT_EQ(refs(), before);
}

TEST_F(LfsRouterTest, BasicUploadVerifyCommitTreeAndResolveRedirect) {
  create();
  const std::string content = "hello lfs\n";
  const json answer = batch("upload", k_hello_oid, content.size(), {"basic"});
  EXPECT_EQ(answer["transfer"], "basic");
  const json& object = answer["objects"][0];
  ASSERT_TRUE(object.contains("actions")) << answer.dump();
  const std::string href = object["actions"]["upload"]["href"];
  EXPECT_FALSE(object["actions"]["upload"].contains("header"));
  EXPECT_NE(href.find("signature="), std::string::npos);

  // Not signed, or a body of the wrong bytes: refused, nothing stored.
  EXPECT_EQ(put(href.substr(0, href.find('?')), content).status, 403);
  EXPECT_EQ(put(href, "hello LFS\n").status, 400);
  EXPECT_FALSE(LfsObjectStore(store_dir()).stored_size(k_hello_oid));

  ASSERT_EQ(put(href, content).status, 200);
  EXPECT_EQ(LfsObjectStore(store_dir()).stored_size(k_hello_oid), content.size());
  // Stored now: the batch asks for nothing.
  EXPECT_FALSE(batch("upload", k_hello_oid, content.size())["objects"][0].contains("actions"));
  const std::string verify = object["actions"]["verify"]["href"];
  const auto verified = send("POST", path_of(verify),
                             json({{"oid", k_hello_oid}, {"size", content.size()}}).dump(), false);
  EXPECT_EQ(verified.status, 200) << verified.body;

  const auto committed = commit({lfs_line("build/torch-cpu/w.so", k_hello_oid, content.size())});
  ASSERT_EQ(committed.status, 200) << committed.body;
  const std::string sha = json::parse(committed.body)["commitOid"];

  const json tree = json::parse(
      send("GET", "/api/kernels/org/k/tree/main/build/torch-cpu?recursive=true").body);
  ASSERT_EQ(tree.size(), 1u) << tree.dump();
  const std::string pointer = lfs_pointer_text({k_hello_oid, content.size()});
  EXPECT_EQ(tree[0]["size"], content.size());
  EXPECT_EQ(tree[0]["lfs"]["oid"], k_hello_oid);
  EXPECT_EQ(tree[0]["lfs"]["size"], content.size());
  EXPECT_EQ(tree[0]["lfs"]["pointerSize"], pointer.size());
  // The entry's oid is the pointer's git blob sha1, as on the Hub.
  const auto head = send("HEAD", "/kernels/org/k/resolve/main/build/torch-cpu/w.so");
  EXPECT_EQ(head.status, 302);
  EXPECT_EQ(header(head, "X-Linked-Etag"), std::string("\"") + k_hello_oid + "\"");
  EXPECT_EQ(header(head, "X-Linked-Size"), std::to_string(content.size()));
  EXPECT_EQ(header(head, "X-Repo-Commit"), sha);
  const std::string location = header(head, "Location");
  ASSERT_TRUE(location.starts_with(std::string(k_base) + "/.kernelhub/lfs/kernels/org/k/"))
      << location;

  // The download URL works without a token, with ranges; a public object's is not signed
  // (one stable URL a cache can keep: cache_policy.hpp).
  const auto got = send("GET", path_of(location), "", false);
  ASSERT_EQ(got.status, 200) << got.body;
  std::string bytes(got.stream_size, '\0');
  ASSERT_EQ(got.stream_reader(bytes.data(), bytes.size()).value(), content.size());
  EXPECT_EQ(bytes, content);
  const auto part = send("GET", path_of(location), "", false, "", {{"range", "bytes=6-"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.stream_size, 4u);
  EXPECT_EQ(location.find("signature="), std::string::npos) << location;

  const json info = json::parse(send("GET", "/api/kernels/org/k?blobs=true").body);
  bool found = false;
  for (const auto& sibling : info["siblings"]) {
    if (sibling["rfilename"] == "build/torch-cpu/w.so") {
      found = true;
      EXPECT_EQ(sibling["lfs"]["sha256"], k_hello_oid);
      EXPECT_EQ(sibling["size"], content.size());
    }
  }
  EXPECT_TRUE(found) << info.dump();
  // preupload of the same path now offers the sha256 for the client's unchanged check.
  EXPECT_EQ(preupload("build/torch-cpu/w.so", content)["oid"], k_hello_oid);
}

TEST_F(LfsRouterTest, MultipartUploadJoinsPartsAndChecksEtags) {
  create();
  const std::string content = "hello lfs\n";  // 10 bytes: parts of 4, 4 and 2
  const json object = batch("upload", k_hello_oid, content.size())["objects"][0];
  const json& upload = object["actions"]["upload"];
  ASSERT_EQ(upload["header"]["chunk_size"], "4") << object.dump();
  ASSERT_TRUE(upload["header"].contains("3"));
  EXPECT_FALSE(upload["header"].contains("4"));
  std::vector<std::string> etags;
  for (int part = 1; part <= 3; ++part) {
    const auto response = put(upload["header"][std::to_string(part)],
                              content.substr(static_cast<std::size_t>(part - 1) * 4, 4));
    ASSERT_EQ(response.status, 200) << response.body;
    etags.push_back(header(response, "ETag"));
    EXPECT_FALSE(etags.back().empty());
  }
  const auto completion = [&](std::vector<std::string> tags) {
    json parts = json::array();
    for (std::size_t i = 0; i < tags.size(); ++i) {
      parts.push_back({{"partNumber", i + 1}, {"etag", tags[i]}});
    }
    return send("POST", path_of(upload["href"]),
                json({{"oid", k_hello_oid}, {"parts", parts}}).dump(), false);
  };
  EXPECT_EQ(completion({etags[0], etags[1]}).status, 400);
  EXPECT_EQ(completion({etags[0], etags[1], "\"wrong\""}).status, 400);
  EXPECT_FALSE(LfsObjectStore(store_dir()).stored_size(k_hello_oid));
  const auto done = completion(etags);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(LfsObjectStore(store_dir()).stored_size(k_hello_oid), content.size());
  EXPECT_FALSE(fs::exists(store_dir() / "lfs" / "incomplete" / k_hello_oid));
}

TEST_F(LfsRouterTest, LfsFileForAMissingObjectOrWrongSizeIsRefused) {
  create();
  const std::string before = refs();
  EXPECT_EQ(commit({lfs_line("w.so", k_hello_oid, 10)}).status, 400);
  const json object = batch("upload", k_hello_oid, 10, {"basic"})["objects"][0];
  ASSERT_EQ(put(object["actions"]["upload"]["href"], "hello lfs\n").status, 200);
  EXPECT_EQ(commit({lfs_line("w.so", k_hello_oid, 11)}).status, 400);
  EXPECT_EQ(refs(), before);
}

TEST_F(LfsRouterTest, UploadBatchNeedsTokenAndPrivateDownloadsStayHidden) {
  create(/*is_private=*/true);
  batch("upload", k_hello_oid, 10, {"basic"}, /*with_token=*/false, 401);
  const json object = batch("upload", k_hello_oid, 10, {"basic"})["objects"][0];
  ASSERT_EQ(put(object["actions"]["upload"]["href"], "hello lfs\n").status, 200);
  batch("download", k_hello_oid, 10, {"basic"}, /*with_token=*/false, 404);
  const json download = batch("download", k_hello_oid, 10, {"basic"})["objects"][0];
  ASSERT_TRUE(download["actions"].contains("download")) << download.dump();
  const std::string href = path_of(download["actions"]["download"]["href"]);
  EXPECT_EQ(send("GET", href, "", false).status, 200);
  // A private object's URL is signed: changed, it is refused.
  std::string tampered = href;
  tampered.replace(tampered.find("size=") + 5, 2, "11");
  EXPECT_EQ(send("GET", tampered, "", false).status, 403);
}

TEST_F(LfsRouterTest, XetTokenRequestsGetAnAnswerThatSaysHowToUseLfs) {
  create();
  const auto response = send("GET", "/api/kernels/org/k/xet-write-token/main");
  EXPECT_EQ(response.status, 501);
  EXPECT_NE(response.body.find("HF_HUB_DISABLE_XET=1"), std::string::npos);
}

}  // namespace kernelhub::server
