// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/metadata/metadata_reader.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <kernelhub/metadata/json_reader.hpp>
#include <kernelhub/util/did_you_mean.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::metadata {

using nlohmann::json;

namespace {

// `kernels-minver`: a version of exactly three parts, as the reference reads it ("0.12" and
// "1.2.3.4" are errors; "01.2.3" is 1.2.3).
util::Expected<types::Version> parse_kernels_minver(std::string_view text) {
  auto version = KH_TRY(types::Version::parse(text));
  const auto parts = std::count(text.begin(), text.end(), '.') + 1;
  if (parts != 3) {
    return util::fail(fmt::format("\"{}\" has {} components, expected 3", text, parts));
  }
  return version;
}

// Reads one struct after another; each read_* returns nullopt after reporting its problems.
class MetadataReader {
 public:
  explicit MetadataReader(JsonReader& json) : m_json(json) {}

 private:
  // Looks up `key` (or its `alias`) in `object` and reads it with `read`. The outer optional is
  // "a problem was reported", the inner one "the key is absent".
  template <typename Read>
  auto with(const json& object, const std::string& path, std::string_view key, Field field,
            Read read, std::string_view alias = {})
      -> std::optional<std::optional<typename std::invoke_result_t<Read, const json&, const std::string&>::value_type>> {
    using Value = typename std::invoke_result_t<Read, const json&, const std::string&>::value_type;
    const auto before = m_json.error_count();
    const json* value = alias.empty() ? m_json.member(object, path, {key}, field)
                                      : m_json.member(object, path, {key, alias}, field);
    const bool failed_lookup = m_json.error_count() != before;
    // One named result returned everywhere (no copies of a disengaged inner optional, which
    // GCC 12 reports as maybe-uninitialized at -O2).
    std::optional<std::optional<Value>> out;
    if (value == nullptr) {
      if (!failed_lookup && field != Field::required) {
        out.emplace();
      }
      return out;
    }
    auto result = read(*value, JsonReader::member_path(path, key));
    if (result) {
      out.emplace(std::move(*result));
    }
    return out;
  }

  template <typename T, typename Parse>
  std::optional<T> parsed(const json& value, const std::string& path, Parse parse) {
    auto text = m_json.string(value, path);
    if (!text) {
      return std::nullopt;
    }
    auto result = parse(*text);
    if (!result) {
      m_json.error(path, result.error().message);
      return std::nullopt;
    }
    return std::move(*result);
  }

  auto string_reader() {
    return [this](const json& v, const std::string& p) { return m_json.string(v, p); };
  }
  auto string_array_reader() {
    return [this](const json& v, const std::string& p) { return m_json.string_array(v, p); };
  }
  auto git_url_reader() {
    return [this](const json& v, const std::string& p) {
      return parsed<types::GitUrl>(v, p, types::GitUrl::parse);
    };
  }

  std::optional<types::Backend> backend_type(const json& value, const std::string& path) {
    // serde also reads a unit enum variant from the one-key form {"cuda": null}.
    const bool one_key_form =
        value.is_object() && m_json.keys_at(path).size() == 1 && value.begin().value().is_null();
    auto name = one_key_form ? std::optional<std::string>(value.begin().key())
                             : m_json.string(value, path);
    if (!name) {
      return std::nullopt;
    }
    auto backend = types::backend_from_name(*name);
    if (!backend) {
      auto hint = util::did_you_mean(*name, types::k_backend_names);
      m_json.error(path, fmt::format("unknown backend \"{}\"", *name),
                   hint.empty() ? fmt::format("expected one of: {}", fmt::join(types::k_backend_names, ", "))
                                : hint);
    }
    return backend;
  }

  std::optional<BackendInfo> backend_info(const json& value, const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    auto type = with(value, path, "type", Field::required,
                     [&](const json& v, const std::string& p) { return backend_type(v, p); });
    auto archs = with(value, path, "archs", Field::optional, string_array_reader());
    if (!type || !archs) {
      return std::nullopt;
    }
    return BackendInfo{**type, std::move(*archs)};
  }

  std::optional<types::KernelDependency> dependency(const json& value, const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    // The reference denies unknown keys here, unlike everywhere else in metadata.json.
    bool ok = true;
    for (const auto& key : m_json.keys_at(path)) {
      if (key != "repo-id" && key != "version" && key != "revision") {
        m_json.error(path, fmt::format("unknown key \"{}\"", key),
                     "a dependency has \"repo-id\" and one of \"version\" or \"revision\"");
        ok = false;
      }
    }
    auto repo_id = with(value, path, "repo-id", Field::required, string_reader());
    auto version = with(value, path, "version", Field::optional, [&](const json& v, const std::string& p) {
      return m_json.unsigned_integer(v, p);
    });
    auto revision = with(value, path, "revision", Field::optional, string_reader());
    if (!ok || !repo_id || !version || !revision) {
      return std::nullopt;
    }
    types::KernelDependency dependency{std::move(**repo_id), *version, std::move(*revision)};
    if (auto checked = dependency.check(); !checked) {
      m_json.error(path, checked.error().message);
      return std::nullopt;
    }
    return dependency;
  }

  std::optional<std::vector<types::KernelDependency>> dependencies(const json& value,
                                                                   const std::string& path) {
    if (!value.is_array()) {
      m_json.error(path, fmt::format("expected an array of dependencies, found {}", value.type_name()));
      return std::nullopt;
    }
    std::vector<types::KernelDependency> out;
    bool ok = true;
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto item = dependency(value[i], JsonReader::index_path(path, i));
      ok = ok && item.has_value();
      if (item) {
        out.push_back(std::move(*item));
      }
    }
    return ok ? std::optional(std::move(out)) : std::nullopt;
  }

  std::optional<Digest> read_digest(const json& value, const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    auto algorithm = with(value, path, "algorithm", Field::required,
                          [&](const json& v, const std::string& p) -> std::optional<DigestAlgorithm> {
                            auto name = m_json.string(v, p);
                            if (!name) {
                              return std::nullopt;
                            }
                            auto parsed = digest_algorithm_from_name(*name);
                            if (!parsed) {
                              m_json.error(p, fmt::format("unknown digest algorithm \"{}\"", *name),
                                           "expected \"sha256\" or \"sha512\"");
                            }
                            return parsed;
                          });
    auto files = with(value, path, "files", Field::required,
                      [&](const json& v, const std::string& p) { return digest_files(v, p); });
    if (!algorithm || !files) {
      return std::nullopt;
    }
    return Digest{**algorithm, std::move(**files)};
  }

  std::optional<std::map<std::string, std::string>> digest_files(const json& value,
                                                                 const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    // A repeated path keeps its last hash, as serde's map does.
    std::map<std::string, std::string> files;
    bool ok = true;
    for (const auto& [file, hash] : value.items()) {
      auto text = m_json.string(hash, JsonReader::map_key_path(path, file));
      ok = ok && text.has_value();
      if (text) {
        files[file] = std::move(*text);
      }
    }
    return ok ? std::optional(std::move(files)) : std::nullopt;
  }

  // `commit` (alias `sha`) and `dirty`, which must come together when `together_optional`
  // (kernel-builder) and are both required otherwise (kernel).
  std::optional<std::optional<GitStatus>> git_status(const json& object, const std::string& path,
                                                     bool together_optional) {
    const auto field = together_optional ? Field::present_not_null : Field::required;
    auto commit = with(object, path, "commit", field, [&](const json& v, const std::string& p) {
      return parsed<types::GitOid>(v, p, types::GitOid::parse);
    }, "sha");
    auto dirty = with(object, path, "dirty", field,
                      [&](const json& v, const std::string& p) { return m_json.boolean(v, p); });
    if (!commit || !dirty) {
      return std::nullopt;
    }
    if (commit->has_value() != dirty->has_value()) {
      m_json.error(path, "git commit and dirty must be specified together");
      return std::nullopt;
    }
    if (!commit->has_value()) {
      return std::optional<GitStatus>();
    }
    return std::optional<GitStatus>(GitStatus{std::move(**commit), **dirty});
  }

  std::optional<Provenance> read_provenance(const json& value, const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    auto builder = with(value, path, "kernel-builder", Field::required,
                        [&](const json& v, const std::string& p) -> std::optional<KernelBuilderProvenance> {
                          if (!m_json.expect_object(v, p)) {
                            return std::nullopt;
                          }
                          auto version = with(v, p, "version", Field::required, string_reader());
                          auto git = git_status(v, p, true);
                          if (!version || !git) {
                            return std::nullopt;
                          }
                          return KernelBuilderProvenance{std::move(**version), std::move(*git)};
                        });
    auto kernel = with(value, path, "kernel", Field::optional,
                       [&](const json& v, const std::string& p) -> std::optional<GitStatus> {
                         if (!m_json.expect_object(v, p)) {
                           return std::nullopt;
                         }
                         auto status = git_status(v, p, false);
                         return status ? std::move(*status) : std::nullopt;
                       });
    if (!builder || !kernel) {
      return std::nullopt;
    }
    // kernel-builder's own key, which the reference ignores: read leniently, so that every
    // metadata.json the reference accepts stays readable; only `false` means unsandboxed.
    const auto sandboxed = value.find("sandboxed");
    const bool unsandboxed = sandboxed != value.end() && sandboxed->is_boolean() &&
                             !sandboxed->get<bool>();
    return Provenance{std::move(**builder), std::move(*kernel), read_build(value), !unsandboxed};
  }

  // `provenance.build` is kernelhub's own record, which the reference reads past: a malformed
  // one is left out rather than reported, so we accept every file the reference does.
  static std::optional<BuildProvenance> read_build(const json& provenance) {
    const auto found = provenance.find("build");
    if (found == provenance.end() || !found->is_object()) {
      return std::nullopt;
    }
    BuildProvenance build;
    if (const auto origin = found->find("origin"); origin != found->end() && origin->is_string()) {
      build.origin = origin->get<std::string>();
    }
    if (const auto epoch = found->find("source-date-epoch");
        epoch != found->end() && epoch->is_number_integer()) {
      build.source_date_epoch = epoch->get<std::int64_t>();
    }
    for (auto [key, target] : {std::pair{"toolchain", &build.toolchain},
                               std::pair{"flags", &build.flags}}) {
      const auto map = found->find(key);
      if (map == found->end() || !map->is_object()) {
        continue;
      }
      for (const auto& [name, text] : map->items()) {
        if (text.is_string()) {
          (*target)[name] = text.get<std::string>();
        }
      }
    }
    return build;
  }

 public:
  std::optional<Metadata> read(const json& root) {
    if (!m_json.expect_object(root, "")) {
      return std::nullopt;
    }
    const std::string top;
    auto name = with(root, top, "name", Field::required, [&](const json& v, const std::string& p) {
      return parsed<types::KernelName>(v, p, types::KernelName::parse);
    });
    auto id = with(root, top, "id", Field::required, string_reader());
    auto version = with(root, top, "version", Field::required, [&](const json& v, const std::string& p) {
      return m_json.unsigned_integer(v, p);
    });
    auto kernels_minver = with(root, top, "kernels-minver", Field::optional,
                               [&](const json& v, const std::string& p) {
                                 return parsed<types::Version>(v, p, parse_kernels_minver);
                               });
    auto license = with(root, top, "license", Field::required, string_reader());
    auto upstream = with(root, top, "upstream", Field::optional, git_url_reader());
    auto source = with(root, top, "source", Field::optional, git_url_reader());
    auto python_depends = with(root, top, "python-depends", Field::required, string_array_reader());
    auto kernel_depends = with(root, top, "kernel-depends", Field::present_not_null,
                               [&](const json& v, const std::string& p) { return dependencies(v, p); });
    auto backend = with(root, top, "backend", Field::required,
                        [&](const json& v, const std::string& p) { return backend_info(v, p); });
    auto digest = with(root, top, "digest", Field::optional,
                       [&](const json& v, const std::string& p) { return read_digest(v, p); });
    auto provenance = with(root, top, "provenance", Field::optional,
                           [&](const json& v, const std::string& p) { return read_provenance(v, p); });
    if (m_json.has_errors()) {
      return std::nullopt;
    }
    return Metadata{.name = std::move(**name),
                    .id = std::move(**id),
                    .version = **version,
                    .kernels_minver = kernels_minver ? std::move(*kernels_minver) : std::nullopt,
                    .license = std::move(**license),
                    .upstream = upstream ? std::move(*upstream) : std::nullopt,
                    .source = source ? std::move(*source) : std::nullopt,
                    .python_depends = std::move(**python_depends),
                    .kernel_depends = kernel_depends && *kernel_depends ? std::move(**kernel_depends)
                                                                       : std::vector<types::KernelDependency>{},
                    .backend = std::move(**backend),
                    .digest = digest ? std::move(*digest) : std::nullopt,
                    .provenance = provenance ? std::move(*provenance) : std::nullopt};
  }

 private:
  JsonReader& m_json;
};

}  // namespace

std::optional<Metadata> read_metadata(std::string_view text, const std::string& file_name,
                                      util::DiagnosticSink& sink) {
  JsonReader json(text, file_name, sink);
  if (!json.parsed()) {
    return std::nullopt;
  }
  return MetadataReader(json).read(json.root());
}

util::Expected<Metadata> parse_metadata(std::string_view text, const std::string& file_name) {
  util::DiagnosticCollector collector;
  auto metadata = read_metadata(text, file_name, collector);
  if (metadata) {
    return std::move(*metadata);
  }
  std::vector<std::string> lines;
  for (const auto& diagnostic : collector.all()) {
    const auto& loc = diagnostic.location;
    lines.push_back(loc.line == 0 ? fmt::format("{}: {}", loc.file, diagnostic.message)
                                  : fmt::format("{}:{}:{}: {}", loc.file, loc.line, loc.column,
                                                diagnostic.message));
  }
  return util::fail(fmt::format("{}", fmt::join(lines, "\n")));
}

util::Expected<Metadata> read_metadata_file(const std::filesystem::path& path) {
  auto text = KH_TRY(util::read_file(path));
  return parse_metadata(text, path.string());
}

}  // namespace kernelhub::metadata
