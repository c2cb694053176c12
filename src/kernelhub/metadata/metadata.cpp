// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/metadata/metadata.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::metadata {

namespace {

// nlohmann::ordered_json keeps insertion order, so the output follows the reference's field
// order instead of sorting keys.
using Json = nlohmann::ordered_json;

Json git_status_json(Json object, const GitStatus& status) {
  object["commit"] = status.commit.str();
  object["dirty"] = status.dirty;
  return object;
}

Json provenance_json(const Provenance& provenance) {
  Json builder = Json::object();
  builder["version"] = provenance.kernel_builder.version;
  if (provenance.kernel_builder.git) {
    builder = git_status_json(std::move(builder), *provenance.kernel_builder.git);
  }
  Json out = Json::object();
  out["kernel-builder"] = std::move(builder);
  if (provenance.kernel) {
    out["kernel"] = git_status_json(Json::object(), *provenance.kernel);
  }
  if (const auto& build = provenance.build) {
    Json record = Json::object();
    if (build->origin) {
      record["origin"] = *build->origin;
    }
    if (build->source_date_epoch) {
      record["source-date-epoch"] = *build->source_date_epoch;
    }
    record["toolchain"] = build->toolchain;
    record["flags"] = build->flags;
    out["build"] = std::move(record);
  }
  if (!provenance.sandboxed) {
    out["sandboxed"] = false;
  }
  return out;
}

Json kernel_dependency_json(const types::KernelDependency& dependency) {
  Json out = Json::object();
  out["repo-id"] = dependency.repo_id;
  if (dependency.version) {
    out["version"] = *dependency.version;
  }
  if (dependency.revision) {
    out["revision"] = *dependency.revision;
  }
  return out;
}

}  // namespace

bool Provenance::is_dirty() const {
  return (kernel_builder.git && kernel_builder.git->dirty) || (kernel && kernel->dirty);
}

std::string kernels_minver_text(const types::Version& version) {
  return fmt::format("{}.{}.{}", version.component(0), version.component(1),
                     version.component(2));
}

bool Metadata::is_dirty() const { return provenance && provenance->is_dirty(); }

bool Metadata::is_unsandboxed() const { return provenance && !provenance->sandboxed; }

std::string to_json(const Metadata& metadata) {
  Json out = Json::object();
  out["name"] = metadata.name.str();
  out["id"] = metadata.id;
  out["version"] = metadata.version;
  if (metadata.kernels_minver) {
    out["kernels-minver"] = kernels_minver_text(*metadata.kernels_minver);
  }
  out["license"] = metadata.license;
  if (metadata.upstream) {
    out["upstream"] = metadata.upstream->original();
  }
  if (metadata.source) {
    out["source"] = metadata.source->original();
  }
  out["python-depends"] = metadata.python_depends;
  out["kernel-depends"] = Json::array();
  for (const auto& dependency : metadata.kernel_depends) {
    out["kernel-depends"].push_back(kernel_dependency_json(dependency));
  }
  Json backend = Json::object();
  backend["type"] = types::to_string(metadata.backend.type);
  if (metadata.backend.archs) {
    backend["archs"] = *metadata.backend.archs;
  }
  out["backend"] = std::move(backend);
  if (metadata.digest) {
    Json digest = Json::object();
    digest["algorithm"] = to_string(metadata.digest->algorithm);
    digest["files"] = Json::object();
    for (const auto& [path, hash] : metadata.digest->files) {
      digest["files"][path] = hash;
    }
    out["digest"] = std::move(digest);
  }
  if (metadata.provenance) {
    out["provenance"] = provenance_json(*metadata.provenance);
  }
  // Non-ASCII stays as UTF-8, as serde_json writes it; invalid UTF-8 (a non-UTF-8 file name in
  // a digest) becomes U+FFFD, as the reference's lossy path conversion does.
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

util::Expected<void> write_metadata_file(const std::filesystem::path& path,
                                         const Metadata& metadata) {
  return util::write_file_atomic(path, to_json(metadata));
}

}  // namespace kernelhub::metadata
