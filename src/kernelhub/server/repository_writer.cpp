// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_writer.hpp>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

constexpr const char* k_author_name = "kernelhub";
constexpr const char* k_author_email = "kernelhub@localhost";

bool looks_like_sha(std::string_view name) {
  return name.size() == GIT_OID_HEXSZ && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

// Why a new branch or tag name is refused, or nullopt. Besides git's ref-name rules (checked
// on the full ref), the rules of `git check-ref-format --branch` and the Hub: `HEAD` and a
// leading `-` (which tools read as an option) are refused, and so is a name that already
// starts with `refs/` (it would become `refs/heads/refs/heads/x`) or looks like a commit id.
std::optional<std::string_view> ref_name_problem(std::string_view name) {
  if (name.empty()) {
    return "it is empty";
  }
  if (name == "HEAD" || name == "@") {
    return "it is reserved by git";
  }
  if (name.front() == '-') {
    return "it starts with '-'";
  }
  if (name.starts_with("refs/")) {
    return "give the name without \"refs/...\"";
  }
  if (looks_like_sha(name)) {
    return "it looks like a commit id";
  }
  return std::nullopt;
}

HubExpected<std::string> checked_ref(std::string_view prefix, std::string_view name,
                                     std::string_view what) {
  const std::string ref = std::string(prefix) + std::string(name);
  if (const auto problem = ref_name_problem(name)) {
    return bad_request(fmt::format("invalid {} name \"{}\": {}", what, name, *problem));
  }
  if (!git::is_valid_ref_name(ref)) {
    return bad_request(fmt::format("invalid {} name \"{}\": not a valid git ref name", what,
                                   name));
  }
  return ref;
}

HubExpected<git::Signature> signature_now() {
  git_signature* raw = nullptr;
  if (git_signature_now(&raw, k_author_name, k_author_email) != 0) {
    return git_failure("make a signature");
  }
  return git::Signature(raw);
}

HubExpected<void> apply_operation(git_repository* repo, git_index* index,
                                  const CommitOperation& operation) {
  switch (operation.kind) {
    case CommitOperation::Kind::add_file: {
      git_index_entry entry{};
      if (!operation.blob_id.empty()) {
        if (git_oid_fromstr(&entry.id, operation.blob_id.c_str()) != 0) {
          return git_failure(fmt::format("read the blob id of \"{}\"", operation.path));
        }
      } else if (git_blob_create_from_buffer(&entry.id, repo, operation.content.data(),
                                             operation.content.size()) != 0) {
        return git_failure(fmt::format("store \"{}\"", operation.path));
      }
      entry.mode = GIT_FILEMODE_BLOB;
      entry.path = operation.path.c_str();
      entry.file_size = static_cast<std::uint32_t>(operation.size);
      if (git_index_add(index, &entry) != 0) {
        return bad_request(fmt::format("cannot add \"{}\": {}", operation.path,
                                       git::last_error()));
      }
      return {};
    }
    case CommitOperation::Kind::delete_file:
      if (git_index_get_bypath(index, operation.path.c_str(), 0) == nullptr) {
        return entry_not_found(operation.path);
      }
      if (git_index_remove(index, operation.path.c_str(), 0) != 0) {
        return git_failure(fmt::format("delete \"{}\"", operation.path));
      }
      return {};
    case CommitOperation::Kind::delete_folder: {
      std::size_t position = 0;
      if (git_index_find_prefix(&position, index, (operation.path + "/").c_str()) != 0) {
        return entry_not_found(operation.path + "/");
      }
      if (git_index_remove_directory(index, operation.path.c_str(), 0) != 0) {
        return git_failure(fmt::format("delete \"{}/\"", operation.path));
      }
      return {};
    }
    case CommitOperation::Kind::add_lfs_file:
      // The commit handler replaces these with their pointers before any write.
      return hub_fail(500, "", fmt::format("LFS file \"{}\" reached the writer unresolved",
                                           operation.path));
  }
  return {};
}

std::string commit_message(const CommitRequest& request) {
  std::string message = request.summary.empty() ? "Upload files" : request.summary;
  if (!request.description.empty()) {
    message += "\n\n" + request.description;
  }
  return message + "\n";
}

}  // namespace

HubExpected<std::string> commit_to_branch(git_repository* repo, const std::string& branch_ref,
                                          const CommitRequest& request) {
  git_reference* raw_ref = nullptr;
  if (git_reference_lookup(&raw_ref, repo, branch_ref.c_str()) != 0) {
    return revision_not_found(branch_ref);
  }
  const git::Reference ref(raw_ref);
  git_object* raw_head = nullptr;
  if (git_reference_peel(&raw_head, ref.get(), GIT_OBJECT_COMMIT) != 0) {
    return revision_not_found(branch_ref);
  }
  const git::Object head_object(raw_head);
  const git_oid head_id = *git_object_id(head_object.get());
  const std::string head_sha = git::to_hex(head_id);
  if (request.parent_commit) {
    const std::string& parent = *request.parent_commit;
    const bool matches = parent.size() >= 5 && parent.size() <= head_sha.size() &&
                         head_sha.compare(0, parent.size(), parent) == 0;
    if (!matches) {
      return hub_fail(412, "", fmt::format("parentCommit \"{}\" is not the head of \"{}\" ({})",
                                           parent, branch_ref, head_sha));
    }
  }
  const auto* head = reinterpret_cast<const git_commit*>(head_object.get());
  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, head) != 0) {
    return git_failure("read the head tree");
  }
  const git::Tree head_tree(raw_tree);

  // An index that lives only in memory: nothing under the repository changes until the
  // objects are written and the ref moves.
  git_index* raw_index = nullptr;
  if (git_index_new(&raw_index) != 0) {
    return git_failure("make an index");
  }
  const git::Index index(raw_index);
  if (git_index_read_tree(index.get(), head_tree.get()) != 0) {
    return git_failure("read the head tree");
  }
  for (const auto& operation : request.operations) {
    KH_HUB_TRY(apply_operation(repo, index.get(), operation));
  }
  git_oid tree_id;
  if (git_index_write_tree_to(&tree_id, index.get(), repo) != 0) {
    return git_failure("write the new tree");
  }
  git_tree* raw_new_tree = nullptr;
  if (git_tree_lookup(&raw_new_tree, repo, &tree_id) != 0) {
    return git_failure("read the new tree");
  }
  const git::Tree new_tree(raw_new_tree);
  const git::Signature signature = KH_HUB_TRY(signature_now());
  const git_commit* parents[] = {head};
  git_oid commit_id;
  const std::string message = commit_message(request);
  if (git_commit_create(&commit_id, repo, nullptr, signature.get(), signature.get(), nullptr,
                        message.c_str(), new_tree.get(), 1, parents) != 0) {
    return git_failure("write the commit");
  }
  git_reference* raw_moved = nullptr;
  const std::string log = fmt::format("commit: {}", request.summary);
  const int moved = git_reference_create_matching(&raw_moved, repo, branch_ref.c_str(),
                                                  &commit_id, /*force=*/1, &head_id,
                                                  log.c_str());
  if (moved == GIT_EMODIFIED) {
    return hub_fail(412, "", fmt::format("\"{}\" moved during the commit; retry", branch_ref));
  }
  if (moved != 0) {
    return git_failure(fmt::format("move \"{}\"", branch_ref));
  }
  git_reference_free(raw_moved);
  return git::to_hex(commit_id);
}

HubExpected<void> create_branch(git_repository* repo, std::string_view name,
                                const std::string& commit) {
  const std::string ref = KH_HUB_TRY(checked_ref("refs/heads/", name, "branch"));
  git_oid oid;
  if (git_oid_fromstr(&oid, commit.c_str()) != 0) {
    return revision_not_found(commit);
  }
  git_reference* raw = nullptr;
  const int created = git_reference_create(&raw, repo, ref.c_str(), &oid, /*force=*/0,
                                           "branch: created");
  if (created == GIT_EEXISTS) {
    return hub_fail(409, "", fmt::format("branch \"{}\" already exists", name));
  }
  if (created != 0) {
    return git_failure(fmt::format("create branch \"{}\"", name));
  }
  git_reference_free(raw);
  return {};
}

HubExpected<void> delete_branch(git_repository* repo, std::string_view name) {
  const std::string ref = KH_HUB_TRY(checked_ref("refs/heads/", name, "branch"));
  if (name == "main") {
    return hub_fail(403, "", "the default branch \"main\" cannot be deleted");
  }
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, ref.c_str()) != 0) {
    return revision_not_found(std::string(name));
  }
  const git::Reference reference(raw);
  if (git_reference_delete(reference.get()) != 0) {
    return git_failure(fmt::format("delete branch \"{}\"", name));
  }
  return {};
}

HubExpected<void> create_tag(git_repository* repo, std::string_view name,
                             const std::string& commit, std::string_view message) {
  const std::string ref = KH_HUB_TRY(checked_ref("refs/tags/", name, "tag"));
  git_oid oid;
  git_object* raw_target = nullptr;
  if (git_oid_fromstr(&oid, commit.c_str()) != 0 ||
      git_object_lookup(&raw_target, repo, &oid, GIT_OBJECT_COMMIT) != 0) {
    return revision_not_found(commit);
  }
  const git::Object target(raw_target);
  git_reference* existing = nullptr;
  if (git_reference_lookup(&existing, repo, ref.c_str()) == 0) {
    git_reference_free(existing);
    return hub_fail(409, "", fmt::format("tag \"{}\" already exists", name));
  }
  const std::string tag_name(name);
  int created = 0;
  git_oid tag_id;
  if (message.empty()) {
    created = git_tag_create_lightweight(&tag_id, repo, tag_name.c_str(), target.get(), 0);
  } else {
    const git::Signature signature = KH_HUB_TRY(signature_now());
    const std::string text = std::string(message) + "\n";
    created = git_tag_create(&tag_id, repo, tag_name.c_str(), target.get(), signature.get(),
                             text.c_str(), 0);
  }
  if (created == GIT_EEXISTS) {
    return hub_fail(409, "", fmt::format("tag \"{}\" already exists", name));
  }
  if (created != 0) {
    return git_failure(fmt::format("create tag \"{}\"", name));
  }
  return {};
}

HubExpected<void> delete_tag(git_repository* repo, std::string_view name) {
  const std::string ref = KH_HUB_TRY(checked_ref("refs/tags/", name, "tag"));
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, ref.c_str()) != 0) {
    return revision_not_found(std::string(name));
  }
  const git::Reference reference(raw);
  if (git_reference_delete(reference.get()) != 0) {
    return git_failure(fmt::format("delete tag \"{}\"", name));
  }
  return {};
}

namespace {

class GitBlobStream final : public BlobStream {
 public:
  GitBlobStream(git::Odb odb, git_odb_stream* stream) : m_odb(std::move(odb)), m_stream(stream) {}
  GitBlobStream(const GitBlobStream&) = delete;
  GitBlobStream& operator=(const GitBlobStream&) = delete;
  // Without finalize_write, libgit2 removes its temporary file: nothing is stored.
  ~GitBlobStream() override { git_odb_stream_free(m_stream); }

  HubExpected<void> write(std::string_view bytes) override {
    if (git_odb_stream_write(m_stream, bytes.data(), bytes.size()) != 0) {
      return git_failure("store a file");
    }
    return {};
  }

  HubExpected<std::string> finish() override {
    git_oid id;
    if (git_odb_stream_finalize_write(&id, m_stream) != 0) {
      return git_failure("store a file");
    }
    return git::to_hex(id);
  }

 private:
  git::Odb m_odb;
  git_odb_stream* m_stream;
};

}  // namespace

HubExpected<std::unique_ptr<BlobStream>> open_blob_stream(git_repository* repo,
                                                          std::uint64_t size) {
  git_odb* raw_odb = nullptr;
  if (git_repository_odb(&raw_odb, repo) != 0) {
    return git_failure("open the object database");
  }
  git::Odb odb(raw_odb);
  git_odb_stream* stream = nullptr;
  if (git_odb_open_wstream(&stream, odb.get(), static_cast<git_object_size_t>(size),
                           GIT_OBJECT_BLOB) != 0) {
    return git_failure("store a file");
  }
  return std::unique_ptr<BlobStream>(std::make_unique<GitBlobStream>(std::move(odb), stream));
}

HubExpected<std::string> store_blob(git_repository* repo, std::string_view bytes) {
  git_oid id;
  if (git_blob_create_from_buffer(&id, repo, bytes.data(), bytes.size()) != 0) {
    return git_failure("store a file");
  }
  return git::to_hex(id);
}

}  // namespace kernelhub::server
