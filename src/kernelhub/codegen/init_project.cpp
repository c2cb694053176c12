// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/init_project.hpp>

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <kernelhub/codegen/template_engine.hpp>

namespace kernelhub::codegen {

using nlohmann::json;

namespace {

constexpr std::string_view k_manifest = "manifest.toml";

// One [[file]] entry of the manifest.
struct ManifestEntry {
  std::string template_path;
  std::string path;                 // a template for the output path
  std::optional<std::string> when;  // an expression; absent means always
  Executable executable = Executable::no;
};

std::string entry_location(std::size_t index) {
  return fmt::format("templates/init/{} file #{}", k_manifest, index + 1);
}

util::Expected<ManifestEntry> read_entry(const toml::table& table, std::size_t index) {
  for (const auto& [key, unused] : table) {
    const auto name = key.str();
    if (name != "template" && name != "path" && name != "when" && name != "executable") {
      return util::fail(fmt::format("{}: unknown key \"{}\"", entry_location(index), name));
    }
  }
  ManifestEntry entry;
  const auto template_path = table["template"].value<std::string>();
  const auto path = table["path"].value<std::string>();
  if (!template_path || !path) {
    return util::fail(fmt::format("{}: \"template\" and \"path\" must be strings",
                                  entry_location(index)));
  }
  entry.template_path = *template_path;
  entry.path = *path;
  if (table.contains("when")) {
    entry.when = table["when"].value<std::string>();
    if (!entry.when) {
      return util::fail(fmt::format("{}: \"when\" must be a string", entry_location(index)));
    }
  }
  if (table.contains("executable")) {
    const auto executable = table["executable"].value<bool>();
    if (!executable) {
      return util::fail(fmt::format("{}: \"executable\" must be a boolean", entry_location(index)));
    }
    entry.executable = *executable ? Executable::yes : Executable::no;
  }
  return entry;
}

util::Expected<std::vector<ManifestEntry>> read_manifest(std::string_view text) {
  toml::table root;
  try {
    root = toml::parse(text, k_manifest);
  } catch (const toml::parse_error& error) {
    return util::fail(fmt::format("templates/init/{}:{}:{}: {}", k_manifest,
                                  error.source().begin.line, error.source().begin.column,
                                  error.description()));
  }
  const auto* files = root["file"].as_array();
  if (files == nullptr) {
    return util::fail(fmt::format("templates/init/{}: no [[file]] entries", k_manifest));
  }
  std::vector<ManifestEntry> entries;
  for (std::size_t i = 0; i < files->size(); ++i) {
    const auto* table = (*files)[i].as_table();
    if (table == nullptr) {
      return util::fail(fmt::format("{}: not a table", entry_location(i)));
    }
    entries.push_back(KH_TRY(read_entry(*table, i)));
  }
  return entries;
}

// Init templates keep their final newline (they are whole files) and may indent block tags.
const TemplateOptions k_file_options = {LstripBlocks::yes, TrailingNewline::keep};

util::Expected<bool> is_selected(const ManifestEntry& entry, std::size_t index,
                                 const json& context) {
  if (!entry.when) {
    return true;
  }
  const auto test = fmt::format("{{% if {} %}}yes{{% endif %}}", *entry.when);
  const auto result = render_template(test, "when", context);
  if (!result) {
    // Positions in the wrapped test mean little to a reader: keep just the problem.
    const auto& message = result.error().message;
    const auto problem = message.find(": ");
    return util::fail(fmt::format("{}: invalid \"when\" expression \"{}\": {}",
                                  entry_location(index), *entry.when,
                                  problem == std::string::npos ? message : message.substr(problem + 2)));
  }
  return *result == "yes";
}

}  // namespace

json init_context(const InitProject& project) {
  const auto has = [&project](types::Backend backend) {
    return std::find(project.backends.begin(), project.backends.end(), backend) !=
           project.backends.end();
  };
  json backends = json::array();
  for (const auto backend : project.backends) {
    backends.push_back(std::string(types::to_string(backend)));
  }
  return json{{"kernel_name", project.name.display_name},
              {"kernel_name_normalized", project.name.python_name},
              {"kernel_name_class", project.name.class_name},
              {"repo_id", project.name.repo_id},
              {"owner", project.name.owner},
              {"license", project.license},
              {"backends", std::move(backends)},
              {"has_cpu", has(types::Backend::cpu)},
              {"has_cuda", has(types::Backend::cuda)},
              {"has_rocm", has(types::Backend::rocm)},
              {"has_metal", has(types::Backend::metal)},
              {"has_xpu", has(types::Backend::xpu)}};
}

util::Expected<FileSet> render_init_project(const InitProject& project,
                                            std::span<const util::EmbeddedFile> templates) {
  const auto* manifest = util::find_embedded(templates, k_manifest);
  if (manifest == nullptr) {
    return util::fail(fmt::format("templates/init/{} is missing", k_manifest));
  }
  const auto entries = KH_TRY(read_manifest(manifest->data));
  const json context = init_context(project);
  FileSet files;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    if (!KH_TRY(is_selected(entry, i, context))) {
      continue;
    }
    const auto* source = util::find_embedded(templates, entry.template_path);
    if (source == nullptr) {
      return util::fail(fmt::format("{}: no template \"{}\"", entry_location(i),
                                    entry.template_path));
    }
    auto path = KH_TRY(render_template(entry.path, entry_location(i) + " path", context));
    auto content = KH_TRY(render_template(
        source->data, "templates/init/" + entry.template_path, context, k_file_options));
    if (auto added = files.add(std::move(path), std::move(content), entry.executable); !added) {
      return util::fail(fmt::format("{}: {}", entry_location(i), added.error().message));
    }
  }
  return files;
}

}  // namespace kernelhub::codegen
