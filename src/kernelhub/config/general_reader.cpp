// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <kernelhub/config/general_reader.hpp>
#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::config::detail {

namespace {

// Lowercased, underscores and blanks turned into dashes, anything else dropped: the name the
// user most likely meant, offered when it is valid.
std::string corrected_name(std::string_view text) {
  std::string result;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 && u < 0x80) {
      result += static_cast<char>(std::tolower(u));
    } else if (c == '_' || c == '-' || c == ' ') {
      result += '-';
    }
  }
  return result;
}

std::string scope_table(PythonDependencyScope scope) {
  return scope ? fmt::format("[general.{}]", types::to_string(*scope)) : "[general]";
}

// Where a python-depends name is allowed, if anywhere, other than `scope`: the table's
// name ("[general]", "[general.cuda]"), or "" when nowhere. (A string, not an optional of the
// optional scope: GCC 12 reports that nesting as maybe-uninitialized at -O2.)
std::string other_scope(std::string_view name, PythonDependencyScope scope) {
  const auto& deps = PythonDependencies::builtin();
  if (scope && deps.find(std::nullopt, name) != nullptr) {
    return scope_table(std::nullopt);
  }
  for (const auto backend : types::k_all_backends) {
    if (backend != scope && deps.find(backend, name) != nullptr) {
      return scope_table(backend);
    }
  }
  return {};
}

void check_python_dependency(ReadContext& ctx, const toml::node& node, const std::string& name,
                             PythonDependencyScope scope) {
  const auto& deps = PythonDependencies::builtin();
  if (deps.find(scope, name) != nullptr) {
    return;
  }
  if (!deps.has_scope(scope)) {
    ctx.error(node.source(),
              fmt::format("no python dependencies are defined for backend \"{}\"",
                          types::to_string(*scope)),
              "remove this python-depends list");
    return;
  }
  const auto message = scope ? fmt::format("unknown python dependency \"{}\" for backend \"{}\"",
                                           name, types::to_string(*scope))
                             : fmt::format("unknown python dependency \"{}\"", name);
  if (const auto elsewhere = other_scope(name, scope); !elsewhere.empty()) {
    ctx.error(node.source(), message,
              fmt::format("\"{}\" is allowed in {}: list it there", name, elsewhere));
    return;
  }
  const auto names = deps.names(scope);
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  auto hint = util::did_you_mean(name, candidates);
  if (hint.empty()) {
    hint = names.empty() ? fmt::format("{} allows no python dependencies", scope_table(scope))
                         : fmt::format("allowed here: {}", fmt::join(names, ", "));
  }
  ctx.error(node.source(), message, std::move(hint));
}

std::optional<KernelDependency> read_kernel_dependency(ReadContext& ctx, const toml::node& node,
                                                       const std::string& path) {
  const auto* table = node.as_table();
  if (table == nullptr) {
    ctx.error(node.source(),
              fmt::format("expected a table for \"{}\", found {}", path, describe_value(node)),
              "write { repo-id = \"owner/name\", version = 1 }");
    return std::nullopt;
  }
  TableReader reader(ctx, *table, path);
  const auto errors = ctx.error_count();
  KernelDependency dependency;
  dependency.repo_id = reader.string("repo-id", Need::required).value_or("");
  dependency.version = reader.count("version");
  dependency.revision = reader.string("revision");
  reader.finish();
  const bool has_version = reader.has("version");
  const bool has_revision = reader.has("revision");
  // Named by its repo-id, or by its position when that is missing too.
  const auto what = dependency.repo_id.empty()
                        ? fmt::format("\"{}\"", path)
                        : fmt::format("kernel dependency \"{}\"", dependency.repo_id);
  if (has_version && has_revision) {
    ctx.error(node.source(), fmt::format("{} sets both \"version\" and \"revision\"", what),
              "keep one: \"version\" follows a major version, \"revision\" pins a git revision");
  } else if (!has_version && !has_revision) {
    ctx.error(node.source(), fmt::format("{} needs a \"version\" or a \"revision\"", what),
              "add version = <major version> or revision = \"<git revision>\"");
  }
  if (ctx.error_count() != errors) {
    return std::nullopt;
  }
  return dependency;
}

std::optional<BackendGeneral> read_backend_general(TableReader& general, types::Backend backend,
                                                   const EditionSchema& schema) {
  const auto key = types::to_string(backend);
  const auto* table = general.subtable(key);
  if (table == nullptr) {
    return std::nullopt;
  }
  TableReader reader(general.context(), *table, general.path_of(key));
  BackendGeneral result;
  if (backend == types::Backend::cuda) {
    result.minver = reader.version("minver");
    result.maxver = reader.version("maxver");
  }
  if (schema.kernel_depends && backend != types::Backend::tpu) {
    result.kernel_depends = read_kernel_depends(reader);
  }
  result.python_depends = read_python_depends(reader, backend);
  reader.finish([&](std::string_view unknown, const toml::key& where) {
    if (unknown == "kernel-depends" && !schema.kernel_depends) {
      general.context().error(where.source(), "\"kernel-depends\" needs edition 5",
                              needs_edition_hint(5));
      return true;
    }
    return false;
  });
  return result;
}

}  // namespace

std::string needs_edition_hint(int edition) {
  return fmt::format(
      "a file without an `edition` key is read as edition 4 or older: add `edition = {}` to "
      "[general]",
      edition);
}

types::KernelName placeholder_name() { return types::KernelName::parse("unnamed").value(); }

std::optional<types::KernelName> read_kernel_name(TableReader& table, std::string_view key) {
  const auto text = table.string(key, Need::required);
  if (!text) {
    return std::nullopt;
  }
  if (auto name = types::KernelName::parse(*text)) {
    return std::move(name).value();
  }
  const auto corrected = corrected_name(*text);
  auto hint = types::KernelName::is_valid(corrected)
                  ? fmt::format("did you mean \"{}\"?", corrected)
                  : std::string(
                        "a name is lowercase letters, digits and dashes, starts with a "
                        "letter, ends with a letter or digit and has at least two "
                        "characters (for example \"my-kernel\", \"relu2d\")");
  table.context().error(table.table().get(key)->source(),
                        fmt::format("invalid kernel name \"{}\"", *text), std::move(hint));
  return std::nullopt;
}

std::optional<types::GitUrl> read_git_url(TableReader& table, std::string_view key) {
  const auto text = table.string(key);
  if (!text) {
    return std::nullopt;
  }
  auto url = types::GitUrl::parse(*text);
  if (!url) {
    table.context().error(table.table().get(key)->source(), url.error().message,
                          "use an https://, ssh:// or git@host:path URL");
    return std::nullopt;
  }
  return std::move(url).value();
}

std::optional<std::vector<types::Backend>> read_backends(TableReader& table, std::string_view key,
                                                         Need need) {
  const auto names = table.strings(key, need);
  if (!names) {
    return std::nullopt;
  }
  auto& ctx = table.context();
  const auto& array = *table.table().get(key)->as_array();
  std::vector<types::Backend> backends;
  bool ok = true;
  for (std::size_t i = 0; i < names->size(); ++i) {
    const auto& name = (*names)[i];
    const auto& node = *array.get(i);
    const auto it = std::find(types::k_backend_names.begin(), types::k_backend_names.end(), name);
    if (it == types::k_backend_names.end()) {
      ctx.error(node.source(), fmt::format("unknown backend \"{}\"", name),
                choice_hint(name, types::k_backend_names));
      ok = false;
      continue;
    }
    const auto backend =
        types::k_all_backends[static_cast<std::size_t>(it - types::k_backend_names.begin())];
    if (std::find(backends.begin(), backends.end(), backend) != backends.end()) {
      ctx.warning(node.source(), fmt::format("duplicate backend \"{}\"", name),
                  "list each backend once");
      continue;
    }
    backends.push_back(backend);
  }
  if (!ok) {
    return std::nullopt;
  }
  return backends;
}

std::optional<std::vector<std::string>> read_python_depends(TableReader& table,
                                                            PythonDependencyScope scope) {
  auto names = table.strings("python-depends");
  if (!names) {
    return std::nullopt;
  }
  const auto& array = *table.table().get("python-depends")->as_array();
  const auto errors = table.context().error_count();
  for (std::size_t i = 0; i < names->size(); ++i) {
    check_python_dependency(table.context(), *array.get(i), (*names)[i], scope);
  }
  if (table.context().error_count() != errors) {
    return std::nullopt;
  }
  return names;
}

std::optional<std::vector<KernelDependency>> read_kernel_depends(TableReader& table) {
  const auto* node = table.get("kernel-depends");
  if (node == nullptr) {
    return std::nullopt;
  }
  const auto path = table.path_of("kernel-depends");
  const auto* array = node->as_array();
  if (array == nullptr) {
    table.context().error(node->source(),
                          fmt::format("expected an array of tables for \"{}\", found {}", path,
                                      describe_value(*node)));
    return std::nullopt;
  }
  std::vector<KernelDependency> result;
  bool ok = true;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto element_path = fmt::format("{}[{}]", path, i);
    table.context().remember(element_path, array->get(i)->source());
    if (auto dependency = read_kernel_dependency(table.context(), *array->get(i), element_path)) {
      result.push_back(std::move(*dependency));
    } else {
      ok = false;
    }
  }
  if (!ok) {
    return std::nullopt;
  }
  return result;
}

General read_general(TableReader& root, const EditionSchema& schema) {
  General general;
  general.name = placeholder_name();
  const auto* table = root.subtable("general", Need::required);
  if (table == nullptr) {
    return general;
  }
  auto& ctx = root.context();
  TableReader reader(ctx, *table, "general");
  const auto need = schema.license_and_version ? Need::required : Need::optional;
  if (auto name = read_kernel_name(reader, "name")) {
    general.name = std::move(*name);
  }
  general.version = reader.count("version", need).value_or(1);
  if (schema.edition_key) {
    reader.get("edition", Need::required);  // its value was checked when choosing the edition
  }
  general.license = reader.string("license", need).value_or("");
  general.upstream = read_git_url(reader, "upstream");
  if (schema.source) {
    general.source = read_git_url(reader, "source");
  }
  general.backends =
      read_backends(reader, "backends", Need::required).value_or(std::vector<types::Backend>{});
  if (schema.kernel_depends) {
    general.kernel_depends = read_kernel_depends(reader);
  }
  general.python_depends = read_python_depends(reader, std::nullopt);
  general.cuda = read_backend_general(reader, types::Backend::cuda, schema);
  general.neuron = read_backend_general(reader, types::Backend::neuron, schema);
  general.xpu = read_backend_general(reader, types::Backend::xpu, schema);
  if (schema.general_tpu) {
    general.tpu = read_backend_general(reader, types::Backend::tpu, schema);
  }
  if (const auto* hub_table = reader.subtable("hub")) {
    TableReader hub(ctx, *hub_table, "general.hub");
    general.hub = Hub{hub.string("repo-id"), hub.string("branch")};
    hub.finish();
  }
  reader.finish([&](std::string_view key, const toml::key& where) {
    if ((key == "kernel-depends" && !schema.kernel_depends) ||
        (key == "tpu" && !schema.general_tpu)) {
      ctx.error(where.source(), fmt::format("\"{}\" needs edition 5", key), needs_edition_hint(5));
      return true;
    }
    return false;
  });
  return general;
}

}  // namespace kernelhub::config::detail
