// SPDX-License-Identifier: Apache-2.0
// Why the rebuild is set up as it is: the sources are always a fresh clone at the commit (of
// the --source checkout, or of the origin), so neither untracked files nor an old build/ of
// the author's folder can enter it; the clone's origin is set to the published one, since the
// origin is recorded in metadata.json but is no input of the build; SOURCE_DATE_EPOCH is the
// published one (the commit's time unless the publisher set another); and the unique id is
// the published id's, so the module name and the torch.ops namespace are the same bytes.
#include <kernelhub/builder/verify_build.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/builder/git_state.hpp>
#include <kernelhub/builder/step.hpp>
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

util::Expected<fs::path> make_work_dir(const fs::path& root) {
  std::error_code ec;
  const auto parent = root.empty() ? fs::temp_directory_path(ec) : root;
  if (ec) {
    return util::fail(fmt::format("no temporary folder: {}", ec.message()));
  }
  auto pattern = (parent / "kernelhub-verify-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return util::fail(fmt::format("cannot create a folder under {}", parent.string()));
  }
  return fs::path(pattern);
}

// Removes the work folder when the verification is over, unless it is to be kept.
class WorkDir {
 public:
  WorkDir(fs::path path, bool keep) : m_path(std::move(path)), m_keep(keep) {}
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir() {
    if (!m_keep) {
      std::error_code ec;
      fs::remove_all(m_path, ec);
    }
  }
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
  bool m_keep;
};

util::Expected<std::string> manifest_digest(const fs::path& variant) {
  const auto files = KH_TRY(variant_file_list(variant));
  metadata::StreamHasher hasher(metadata::DigestAlgorithm::sha256);
  for (const auto& file : files) {
    const auto hash =
        KH_TRY(metadata::hash_file(metadata::DigestAlgorithm::sha256, variant / file));
    hasher.update(file);
    hasher.update(std::string_view("\0", 1));
    hasher.update(hash);
    hasher.update("\n");
  }
  return "sha256:" + hasher.finish();
}

// The unique part of the published id: what follows `_<python name>_<backend>_`.
util::Expected<std::string> published_unique_id(const metadata::Metadata& meta,
                                                const std::string& variant) {
  const auto prefix = metadata::kernel_id(meta.name, meta.backend.type, "");
  if (!meta.id.starts_with(prefix) || meta.id.size() == prefix.size()) {
    return util::fail(fmt::format("build/{}/metadata.json: id \"{}\" is not \"{}<unique id>\"",
                                  variant, meta.id, prefix));
  }
  return meta.id.substr(prefix.size());
}

struct Published {
  std::string kernel_commit;
  std::string unique_id;
  std::optional<std::string> origin;
  std::optional<std::int64_t> source_date_epoch;
};

util::Expected<Published> read_published(const fs::path& snapshot,
                                         const std::vector<std::string>& names) {
  std::optional<Published> first;
  for (const auto& name : names) {
    const auto file = snapshot / "build" / name / "metadata.json";
    const auto meta = KH_TRY(metadata::read_metadata_file(file));
    const auto where = fmt::format("build/{}/metadata.json", name);
    if (!meta.provenance || !meta.provenance->kernel) {
      return util::fail(fmt::format("{} has no provenance.kernel: the variant was not built from a "
                                    "git commit, so nothing names its sources", where));
    }
    if (meta.provenance->kernel->dirty) {
      return util::fail(fmt::format(
          "{}: provenance.kernel says the variant was built from a dirty tree (commit {} with "
          "uncommitted changes); those changes were never published, so it cannot be rebuilt",
          where, meta.provenance->kernel->commit.str()));
    }
    Published published{meta.provenance->kernel->commit.str(),
                        KH_TRY(published_unique_id(meta, name)), std::nullopt, std::nullopt};
    if (meta.provenance->build) {
      published.origin = meta.provenance->build->origin;
      published.source_date_epoch = meta.provenance->build->source_date_epoch;
    }
    if (first && (first->kernel_commit != published.kernel_commit ||
                  first->unique_id != published.unique_id)) {
      return util::fail(fmt::format(
          "the variants come from different builds ({} has commit {} and unique id {}, {} has "
          "{} and {}): verify them one at a time with --variant",
          names.front(), first->kernel_commit, first->unique_id, name, published.kernel_commit,
          published.unique_id));
    }
    if (!first) {
      first = published;
    }
  }
  return *first;
}

util::Expected<std::vector<std::string>> chosen_variants(const std::vector<std::string>& published,
                                                         const std::vector<std::string>& asked,
                                                         const std::string& revision) {
  if (published.empty()) {
    return util::fail(
        fmt::format("{} has no build variants (no build/<variant>/ folder)", revision));
  }
  if (asked.empty()) {
    return published;
  }
  const std::set<std::string> known(published.begin(), published.end());
  std::vector<std::string> chosen;
  for (const auto& name : asked) {
    if (!known.contains(name)) {
      return util::fail(fmt::format("variant \"{}\" is not published at {}; it has: {}", name,
                                    revision, fmt::join(published, ", ")));
    }
    if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) {
      chosen.push_back(name);
    }
  }
  return chosen;
}

// The sources at `published.kernel_commit` cloned into `dest`; returns the kernel's folder
// in the clone and says where the sources came from.
util::Expected<std::pair<fs::path, std::string>> fetch_sources(const VerifyBuildRequest& request,
                                                               const Published& published,
                                                               const fs::path& dest) {
  if (request.source) {
    const auto source = fs::absolute(*request.source).lexically_normal();
    const auto state = read_git_state(source);
    const auto top = git_work_tree(source);
    if (!state || !top) {
      return util::fail(fmt::format("--source {} is not a git checkout with a commit",
                                    source.string()));
    }
    if (state->status.commit.str() != published.kernel_commit) {
      return util::fail(fmt::format(
          "--source {} is at commit {}, but the published build names {}: check that commit out "
          "(git checkout {})",
          source.string(), state->status.commit.str(), published.kernel_commit,
          published.kernel_commit));
    }
    KH_STEP(clone_at_commit(top->string(), published.kernel_commit, dest, published.origin));
    const auto inside = source.lexically_relative(*top);
    return std::pair{inside.empty() || inside == "." ? dest : dest / inside, source.string()};
  }
  if (!published.origin) {
    return util::fail("the published metadata.json records no provenance.build.origin to clone "
                      "the sources from: give a checkout of the commit with --source DIR");
  }
  KH_STEP(clone_at_commit(*published.origin, published.kernel_commit, dest, published.origin));
  return std::pair{dest, *published.origin};
}

}  // namespace

bool VerifyBuildResult::reproduced() const {
  for (const auto& variant : variants) {
    if (!variant.reproduced()) {
      return false;
    }
  }
  return !variants.empty();
}

util::Expected<VerifyBuildResult> verify_build(const cache::HubCache& cache,
                                               const VerifyBuildRequest& request,
                                               CommandRunner& runner, util::DiagnosticSink& sink) {
  const hub::RepoRef ref{request.repo, hub::RepoType::kernel};
  VerifyBuildResult result;
  std::string revision_name;
  if (request.version) {
    result.commit =
        KH_TRY(cache::resolve_kernel_version(cache, request.repo, *request.version)).commit;
    revision_name = fmt::format("version {} of {}", *request.version, request.repo.str());
  } else {
    result.commit = KH_TRY(cache.resolve_revision(ref, request.revision.value_or("main")));
    revision_name = fmt::format("{}@{}", request.repo.str(), request.revision.value_or("main"));
  }
  const auto published_names = KH_TRY(cache::kernel_variants(cache, request.repo, result.commit));
  const auto names = KH_TRY(chosen_variants(published_names, request.variants, revision_name));
  std::vector<std::string> allow;
  for (const auto& name : names) {
    allow.push_back(fmt::format("build/{}/*", name));
  }
  const auto snapshot = KH_TRY(cache.snapshot_download(
      ref, result.commit, cache::PatternFilter(allow, {"*.pyc", "*/__pycache__/*"})));
  const auto published = KH_TRY(read_published(snapshot.path, names));
  result.kernel_commit = published.kernel_commit;
  result.unique_id = published.unique_id;

  const WorkDir work(KH_TRY(make_work_dir(request.work_root)), request.keep);
  result.work_dir = work.path();
  const auto [kernel_dir, sources] = KH_TRY(fetch_sources(request, published, work.path() / "src"));
  result.sources = sources;

  if (published.source_date_epoch) {
    // The compilers' clock as the publisher's build had it (builder/variant_metadata.hpp reads
    // the variable before the commit's time).
    ::setenv("SOURCE_DATE_EPOCH", std::to_string(*published.source_date_epoch).c_str(), 1);
  }
  auto options = request.build;
  options.unique_id = published.unique_id;
  options.variants = names;
  options.unbuildable =
      request.variants.empty() ? UnbuildableVariants::skip : UnbuildableVariants::fail;
  const auto built = KH_TRY(build_kernel(kernel_dir, options, runner, sink));

  for (const auto& name : names) {
    const auto rebuilt =
        std::find_if(built.variants.begin(), built.variants.end(),
                     [&](const BuiltVariant& variant) { return variant.name == name; });
    if (rebuilt == built.variants.end()) {
      result.not_rebuilt.push_back(name);
      continue;
    }
    VariantVerdict verdict;
    verdict.name = name;
    verdict.published = snapshot.path / "build" / name;
    verdict.rebuilt = rebuilt->path;
    verdict.difference = KH_TRY(first_difference(verdict.published, verdict.rebuilt));
    verdict.digest = KH_TRY(manifest_digest(verdict.published));
    result.variants.push_back(std::move(verdict));
  }
  return result;
}

}  // namespace kernelhub::builder
