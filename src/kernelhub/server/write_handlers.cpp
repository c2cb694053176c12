// SPDX-License-Identifier: Apache-2.0
// The write endpoints of hub-api.md §3: create repo, preupload, commit, branches, tags and
// validate-yaml. Every one checks the token first and validates its whole input before it
// takes the repository's write mutex, so a 4xx never changes anything.
#include <mutex>

#include <fmt/format.h>

#include <kernelhub/server/commit_request.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/repository_writer.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

// The body as a JSON object; an empty body counts as {}.
HubExpected<json> json_body(const Context& ctx) {
  if (ctx.request.body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return json::object();
  }
  json body = json::parse(ctx.request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    return bad_request("malformed request body: expected a JSON object");
  }
  return body;
}

std::optional<std::string> string_member(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

HubExpected<OpenRepository> open_for_write(Context& ctx, const RepoId& id) {
  KH_HUB_TRY(require_write_token(ctx));
  return ctx.store.open(id);
}

// The answer to a commit that carries inline what must come through LFS: huggingface.co
// refuses a push of binary files the same way ("Your push was rejected because it contains
// binary files", with the offending files listed; tests/data/hub/lfs-wire-forms.md).
tl::unexpected<HubError> refuse_inline_files(const std::vector<std::string>& files) {
  std::string list;
  for (const auto& file : files) {
    list += "\n  - " + file;
  }
  return bad_request(fmt::format(
      "Your commit was rejected because it contains binary or large files, which this hub "
      "stores with Git LFS: preupload marks them \"lfs\"; upload them through the LFS batch "
      "API and commit them as lfsFile lines. Offending files:{}",
      list));
}

// Each `lfsFile` line becomes its pointer blob, once its object is found in the repository's
// LFS store with the size the line gives (a copy without a size takes the stored one).
HubExpected<void> resolve_lfs_files(const Context& ctx, const RepoId& id, git_repository* git,
                                    CommitRequest& request) {
  LfsObjectStore store(ctx.store.directory(id));
  for (CommitOperation& operation : request.operations) {
    if (operation.kind != CommitOperation::Kind::add_lfs_file) {
      continue;
    }
    const auto stored = store.stored_size(operation.lfs_oid);
    if (!stored) {
      return bad_request(fmt::format(
          "lfsFile \"{}\": the LFS object {} was never uploaded to this repository (upload it "
          "through the LFS batch API first)",
          operation.path, operation.lfs_oid));
    }
    if (operation.size != 0 && operation.size != *stored) {
      return bad_request(fmt::format("lfsFile \"{}\": the size {} is not the stored object's {}",
                                     operation.path, operation.size, *stored));
    }
    const std::string pointer = lfs_pointer_text({operation.lfs_oid, *stored});
    operation.kind = CommitOperation::Kind::add_file;
    operation.blob_id = KH_HUB_TRY(store_blob(git, pointer));
    operation.size = pointer.size();
  }
  return {};
}

}  // namespace

HubExpected<void> require_write_token(const Context& ctx) {
  if (ctx.settings.tokens.empty()) {
    return hub_fail(403, "",
                    "this server is read-only: start `kernelhub serve` with --token-file to "
                    "allow writes");
  }
  if (!ctx.request.header("authorization")) {
    return hub_fail(401, "", "authorization required: send \"Authorization: Bearer <token>\"");
  }
  if (!has_valid_token(ctx)) {
    return hub_fail(401, "", "Invalid credentials in Authorization header");
  }
  return {};
}

void queue_variant_checks(const Context& ctx, const RepoId& id, const std::string& commit) {
  if (ctx.variant_checks != nullptr && id.type == RepoType::kernel) {
    ctx.variant_checks->enqueue(id, commit, ctx.settings.trusted_keys);
  }
}

HubExpected<HttpResponse> create_repo(Context& ctx) {
  KH_HUB_TRY(require_write_token(ctx));
  const json body = KH_HUB_TRY(json_body(ctx));
  std::string name = string_member(body, "name").value_or("");
  std::optional<std::string> ns = string_member(body, "organization");
  if (!ns && name.find('/') != std::string::npos) {
    ns = name.substr(0, name.find('/'));
    name = name.substr(name.find('/') + 1);
  }
  if (!ns) {
    return bad_request("repo id must be \"namespace/name\": send an \"organization\"");
  }
  const std::string type_name = string_member(body, "type").value_or("model");
  const auto type = repo_type_from_name(type_name);
  if (!type) {
    return bad_request(fmt::format(
        "repo type \"{}\" is not served; use model, dataset or kernel", type_name));
  }
  const RepoId id = KH_HUB_TRY(make_repo_id(*type, *ns, name));
  const auto is_private_value = body.find("private");
  const bool is_private =
      string_member(body, "visibility") == std::optional<std::string>("private") ||
      (is_private_value != body.end() && is_private_value->is_boolean() &&
       is_private_value->get<bool>());
  const bool created = KH_HUB_TRY(ctx.store.create(id, is_private));
  const std::string url = repo_url(ctx, id);
  if (!created) {
    // The client's exist_ok path reads "url" from the 409 body.
    return json_response(
        409, {{"error", fmt::format("repository \"{}\" already exists", id.id())}, {"url", url}});
  }
  return json_response(200, {{"url", url}, {"name", id.id()}, {"id", id.id()}});
}

HubExpected<HttpResponse> preupload(Context& ctx, const RepoId& id, const std::string& revision) {
  const OpenRepository repo = KH_HUB_TRY(open_for_write(ctx, id));
  KH_HUB_TRY(check_revision(revision));
  const json body = KH_HUB_TRY(json_body(ctx));
  const auto files = body.find("files");
  if (files == body.end() || !files->is_array()) {
    return bad_request("malformed preupload body: \"files\" must be a list");
  }
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), revision));
  json answers = json::array();
  for (const auto& file : *files) {
    const auto path = file.is_object() ? string_member(file, "path") : std::nullopt;
    if (!path) {
      return bad_request("malformed preupload body: every file needs a \"path\"");
    }
    KH_HUB_TRY(check_repo_path(*path));
    // huggingface_hub sends the size and the first 512 bytes in base64 (hub-api.md §3.3).
    const auto size_it = file.find("size");
    const std::uint64_t size =
        size_it != file.end() && size_it->is_number_unsigned() ? size_it->get<std::uint64_t>() : 0;
    const auto sample = decode_base64(string_member(file, "sample").value_or("")).value_or("");
    const UploadVerdict verdict = upload_verdict(ctx, repo.git.get(), sha, *path, size, sample);
    // The current oid lets the client skip files that did not change: the git sha1 of a
    // regular file, the sha256 of an LFS one (what the client compares each with).
    auto existing = read_file(repo.git, sha, *path, Content::header);
    json oid;
    if (existing) {
      oid = existing->lfs ? existing->lfs->oid : existing->oid;
    }
    answers.push_back({{"path", *path},
                       {"uploadMode", verdict.lfs ? "lfs" : "regular"},
                       {"shouldIgnore", false},
                       {"oid", oid}});
  }
  return json_response(200, {{"files", answers}});
}

HubExpected<HttpResponse> commit(Context& ctx, const RepoId& id, const std::string& revision) {
  const OpenRepository repo = KH_HUB_TRY(open_for_write(ctx, id));
  KH_HUB_TRY(check_revision(revision));
  const bool create_pr = ctx.target.flag("create_pr");
  const bool to_pr = pull_request_number(revision).has_value();
  git_repository* git = repo.git.get();
  // The target must exist before any blob is stored; it is resolved again under the mutex.
  // A pull request's ref is written to directly, once pull_requests.cpp has checked it.
  if (to_pr && !create_pr) {
    KH_HUB_TRY(resolve_revision(git, revision));
  } else {
    KH_HUB_TRY(resolve_branch(git, revision));
  }
  // Files the Hub would take only through LFS are not stored: they are named in the refusal.
  // The rule reads the target's .gitattributes as they are before this commit.
  const std::string base_commit = KH_HUB_TRY(resolve_revision(git, revision));
  std::vector<std::string> must_use_lfs;
  const auto admit = [&](const std::string& path, std::uint64_t size, std::string_view sample) {
    const UploadVerdict verdict = upload_verdict(ctx, git, base_commit, path, size, sample);
    if (verdict.lfs) {
      must_use_lfs.push_back(fmt::format("{} ({})", path, verdict.reason));
    }
    return !verdict.lfs;
  };
  // Small files are stored whole as their line is read, large ones streamed into git a block
  // at a time, and the spooled body's pages are dropped as the parser passes them.
  const CommitSinks sinks{[git](std::string_view bytes) { return store_blob(git, bytes); },
                          [git](std::uint64_t size) { return open_blob_stream(git, size); },
                          ctx.request.release_body, admit};
  CommitRequest request = KH_HUB_TRY(parse_commit_request(ctx.request.body, sinks));
  if (!must_use_lfs.empty()) {
    return refuse_inline_files(must_use_lfs);
  }
  KH_HUB_TRY(resolve_lfs_files(ctx, id, git, request));
  std::lock_guard lock(ctx.store.write_mutex(id));
  if (to_pr && !create_pr) {
    return push_to_pull_request(ctx, id, repo, revision, request);
  }
  const std::string branch = KH_HUB_TRY(resolve_branch(repo.git.get(), revision));
  if (create_pr) {
    return open_pull_request(ctx, id, repo, branch, request);
  }
  const std::string sha = KH_HUB_TRY(commit_to_branch(repo.git.get(), branch, request));
  queue_variant_checks(ctx, id, sha);
  return json_response(
      200, {{"success", true},
            {"commitOid", sha},
            {"commitUrl", fmt::format("{}/commit/{}", repo_url(ctx, id), sha)},
            {"commitMessage", request.summary},
            {"commitDescription", request.description},
            {"pullRequestUrl", nullptr}});
}

HubExpected<HttpResponse> branch(Context& ctx, const RepoId& id, const std::string& name) {
  const OpenRepository repo = KH_HUB_TRY(open_for_write(ctx, id));
  KH_HUB_TRY(check_revision(name));
  if (ctx.request.method == "DELETE") {
    std::lock_guard lock(ctx.store.write_mutex(id));
    KH_HUB_TRY(delete_branch(repo.git.get(), name));
    return json_response(200, json::object());
  }
  const json body = KH_HUB_TRY(json_body(ctx));
  const std::string start = string_member(body, "startingPoint").value_or("main");
  KH_HUB_TRY(check_revision(start));
  std::lock_guard lock(ctx.store.write_mutex(id));
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), start));
  KH_HUB_TRY(create_branch(repo.git.get(), name, sha));
  return json_response(200, json::object());
}

HubExpected<HttpResponse> tag(Context& ctx, const RepoId& id, const std::string& name) {
  const OpenRepository repo = KH_HUB_TRY(open_for_write(ctx, id));
  KH_HUB_TRY(check_revision(name));
  std::lock_guard lock(ctx.store.write_mutex(id));
  if (ctx.request.method == "DELETE") {
    KH_HUB_TRY(delete_tag(repo.git.get(), name));
    return json_response(200, json::object());
  }
  // POST /tag/{revision} with {"tag": name}: the URL names what to tag.
  const json body = KH_HUB_TRY(json_body(ctx));
  const auto tag_name = string_member(body, "tag");
  if (!tag_name) {
    return bad_request("malformed tag body: \"tag\" must be a string");
  }
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), name));
  KH_HUB_TRY(create_tag(repo.git.get(), *tag_name, sha,
                        string_member(body, "message").value_or("")));
  return json_response(200, json::object());
}

HubExpected<HttpResponse> validate_yaml(Context& ctx) {
  // The client reads the JSON before the status, so this always answers JSON; the card's
  // YAML is not checked here.
  (void)ctx;
  return json_response(200, {{"errors", json::array()}, {"warnings", json::array()}});
}

}  // namespace kernelhub::server::handlers
