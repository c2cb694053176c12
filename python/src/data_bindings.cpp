// SPDX-License-Identifier: Apache-2.0
// The core behind `kernelhub.data` (the kernels-data types of kernels 0.17.2, issue 21):
// versions, kernel names, backends, git object ids, variant digests, build.toml and
// kernels.lock, each parsed and checked by the same C++ the loader and the builder use. The
// Python module only wraps the results in the reference's classes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/filesystem.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "binding_support.hpp"

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/loader/kernel_lock.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/git_oid.hpp>
#include <kernelhub/types/kernel_name.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/diagnostic.hpp>

namespace kernelhub::python {

namespace {

namespace fs = std::filesystem;

// (repo_id, version or None, revision or None), as kernelhub.data builds KernelDependency.
using DependencyTuple =
    std::tuple<std::string, std::optional<std::uint64_t>, std::optional<std::string>>;

metadata::DigestAlgorithm algorithm_from(const std::string& name) {
  const auto algorithm = metadata::digest_algorithm_from_name(name);
  if (!algorithm) {
    raise(PyExc_ValueError, "unknown digest algorithm \"" + name + "\"");
  }
  return *algorithm;
}

std::vector<DependencyTuple> dependency_tuples(
    const std::optional<std::vector<types::KernelDependency>>& depends) {
  std::vector<DependencyTuple> out;
  for (const auto& dependency : depends.value_or(std::vector<types::KernelDependency>{})) {
    out.emplace_back(dependency.repo_id, dependency.version, dependency.revision);
  }
  return out;
}

std::string diagnostics_text(const util::DiagnosticCollector& sink) {
  std::string message;
  for (const auto& diagnostic : sink.sorted()) {
    message += (message.empty() ? "" : "\n") + util::render(diagnostic);
  }
  return message;
}

}  // namespace

void bind_data(nb::module_& m) {
  m.def(
      "data_version",
      [](const std::string& text) {
        return value_or_raise(types::Version::parse(text), PyExc_ValueError).components();
      },
      nb::arg("text"),
      "A dotted numeric version's components, trailing zeros dropped (the value versions "
      "compare by); ValueError for an empty or non-numeric version.");

  m.def(
      "data_kernel_name",
      [](const std::string& text) {
        return value_or_raise(types::KernelName::parse(text), PyExc_ValueError).str();
      },
      nb::arg("text"), "A kernel name checked against ^[a-z][-a-z0-9]*[a-z0-9]$ (ValueError).");

  m.def(
      "data_backend",
      [](const std::string& text) {
        return std::string(
            types::to_string(value_or_raise(types::parse_backend(text), PyExc_ValueError)));
      },
      nb::arg("text"), "A backend name, case-insensitive, as its kebab-case name (ValueError).");

  m.def(
      "data_git_oid",
      [](const std::string& text) {
        return value_or_raise(types::GitOid::parse(text), PyExc_ValueError).str();
      },
      nb::arg("text"), "A full git object id (40 or 64 hex digits), lowercase (ValueError).");

  m.def(
      "data_hash_variant",
      [](const std::string& algorithm, const fs::path& variant_path) {
        const auto chosen = algorithm_from(algorithm);
        util::Expected<metadata::Digest> digest;
        {
          nb::gil_scoped_release release;
          digest = metadata::hash_variant(chosen, variant_path);
        }
        if (!digest) {
          raise(PyExc_OSError, "Failed to hash variant `" + variant_path.string() +
                                   "`: " + digest.error().message);
        }
        return digest->files;
      },
      nb::arg("algorithm"), nb::arg("variant_path"),
      "{relative path: base64 hash} of every file of a variant, as kernel-builder hashes it "
      "(OSError when a file cannot be read).");

  m.def(
      "data_validate_digest",
      [](const std::string& expected_algorithm,
         const std::map<std::string, std::string>& expected_files,
         const std::string& actual_algorithm,
         const std::map<std::string, std::string>& actual_files) {
        const metadata::Digest expected{algorithm_from(expected_algorithm), expected_files};
        const metadata::Digest actual{algorithm_from(actual_algorithm), actual_files};
        const auto violations = metadata::validate(expected, actual);
        std::vector<std::tuple<std::string, std::string, std::string, std::string, std::string>>
            out;
        for (const auto& violation : violations) {
          using Kind = metadata::DigestViolation::Kind;
          const char* kind = violation.kind == Kind::missing_file   ? "missing_file"
                             : violation.kind == Kind::unknown_file ? "unknown_file"
                             : violation.kind == Kind::hash_mismatch ? "hash_mismatch"
                                                                     : "algorithm_mismatch";
          out.emplace_back(kind, violation.path, violation.expected, violation.got,
                           violation.to_string());
        }
        return nb::make_tuple(out, violations.empty() ? std::string()
                                                      : metadata::describe(violations));
      },
      "([(kind, path, expected, got, text)], message): how `actual` deviates from `expected`; "
      "empty when they match.");

  m.def(
      "data_violation_text",
      [](const std::string& kind, const std::string& path, const std::string& expected,
         const std::string& got) {
        using Kind = metadata::DigestViolation::Kind;
        metadata::DigestViolation violation;
        violation.kind = kind == "missing_file"    ? Kind::missing_file
                         : kind == "unknown_file"  ? Kind::unknown_file
                         : kind == "hash_mismatch" ? Kind::hash_mismatch
                                                   : Kind::algorithm_mismatch;
        violation.path = path;
        violation.expected = expected;
        violation.got = got;
        return violation.to_string();
      },
      "The reference's wording of one digest violation (kinds as data_validate_digest names "
      "them).");

  m.def(
      "data_read_build",
      [](const fs::path& kernel_dir) {
        util::DiagnosticCollector sink;
        const auto loaded = config::load_build_config(kernel_dir, sink);
        if (!loaded) {
          const std::string details = diagnostics_text(sink);
          raise(PyExc_ValueError, "Cannot read build configuration from `" +
                                      (kernel_dir / "build.toml").string() +
                                      "`: " + (details.empty() ? loaded.error().message : details));
        }
        const auto& general = loaded->config.general;
        std::vector<std::string> backends;
        nb::dict per_backend;
        for (const auto backend : general.backends) {
          backends.emplace_back(types::to_string(backend));
        }
        for (const auto backend : types::k_all_backends) {
          const auto& table = general.backend_table(backend);
          if (table) {
            per_backend[nb::cast(std::string(types::to_string(backend)))] =
                dependency_tuples(table->kernel_depends);
          }
        }
        nb::dict out;
        out["backends"] = backends;
        out["kernel_depends"] = dependency_tuples(general.kernel_depends);
        out["backend_kernel_depends"] = per_backend;
        return out;
      },
      nb::arg("kernel_dir"),
      "build.toml of `kernel_dir` (any edition): {backends, kernel_depends, "
      "backend_kernel_depends: {backend: [...]}} with dependencies as (repo_id, version, "
      "revision); ValueError naming every problem.");

  m.def(
      "data_render_kernel_locks",
      [](const std::vector<std::tuple<std::string, std::optional<std::uint64_t>,
                                      std::optional<std::string>, std::string>>& entries) {
        loader::KernelLockFile lock;
        for (const auto& [repo_id, version, revision, commit] : entries) {
          loader::KernelLockEntry entry;
          entry.repo_id = repo_id;
          entry.version = version;
          entry.revision = revision;
          entry.commit = commit;
          lock.entries.push_back(std::move(entry));
        }
        return loader::render_kernel_lock(lock);
      },
      nb::arg("entries"),
      "kernels.lock text (the dependency format, sorted as kernels_data sorts it) of "
      "[(repo_id, version, revision, commit)].");
}

}  // namespace kernelhub::python
