// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/edition_upgrade.hpp>

#include <algorithm>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/config/build_toml_writer.hpp>
#include <kernelhub/config/toml_text_editor.hpp>

namespace kernelhub::config {

namespace {

const toml::table* table_at(const toml::table& parent, std::string_view key) {
  const auto* node = parent.get(key);
  return node != nullptr ? node->as_table() : nullptr;
}

std::vector<std::string> backend_names(const std::vector<types::Backend>& backends) {
  std::vector<std::string> names;
  for (auto backend : backends) {
    names.emplace_back(types::to_string(backend));
  }
  return names;
}

// Plans the text edits that turn an edition 1-4 file into edition 5. The reader has already
// decided what the file means (`target`, its in-memory upgrade); the plan only has to say the
// same thing in edition-5 syntax, so values that moved are taken from `target`. Each step
// returns false when the file's layout is outside what text edits can express.
class EditPlan {
 public:
  EditPlan(const toml::table& root, TomlTextEditor& editor, int edition, const BuildConfig& target)
      : m_root(root), m_editor(editor), m_edition(edition), m_target(target) {}

  bool run() {
    m_general = table_at(m_root, "general");
    return m_general != nullptr && general_keys() && (m_edition != 2 || edition2_general()) &&
           framework() && (m_edition != 1 || edition1_kernels());
  }

 private:
  // version, edition and license follow `version` (or `name`), in the reference's field
  // order; editions 1 and 2 had no `backends`.
  bool general_keys() {
    const bool has_version = m_general->contains("version");
    TomlEntries additions;
    if (!has_version) {
      additions.emplace_back("version", fmt::format("{}", m_target.general.version));
    }
    additions.emplace_back("edition", fmt::format("{}", k_current_edition));
    if (!m_general->contains("license")) {
      additions.emplace_back("license", toml_string(m_target.general.license));
    }
    if (m_edition <= 2 && !m_general->contains("backends")) {
      additions.emplace_back("backends",
                             toml_inline_array(backend_names(m_target.general.backends)));
    }
    const std::string_view anchor = has_version ? "version" : "name";
    return std::all_of(additions.begin(), additions.end(), [&](const auto& addition) {
      return m_editor.insert_after(*m_general, anchor, addition.first, addition.second);
    });
  }

  // Edition 2 kept CUDA bounds and CUDA-only Python packages in [general]; edition 5 has a
  // [general.cuda] table for them. `universal` is expressed by the framework instead.
  bool edition2_general() {
    for (auto key : {"universal", "cuda-minver", "cuda-maxver"}) {
      if (m_general->contains(key) && !m_editor.remove(*m_general, key)) {
        return false;
      }
    }
    const auto& kept = m_target.general.python_depends;
    if (m_general->contains("python-depends") && kept != original_strings("python-depends")) {
      const bool ok =
          kept ? m_editor.replace_value(*m_general, "python-depends", toml_inline_array(*kept))
               : m_editor.remove(*m_general, "python-depends");
      if (!ok) {
        return false;
      }
    }
    const auto& cuda = m_target.general.cuda;
    if (!cuda) {
      return true;
    }
    TomlEntries entries;
    if (cuda->minver) {
      entries.emplace_back("minver", m_editor.value_text(*m_general, "cuda-minver"));
    }
    if (cuda->maxver) {
      entries.emplace_back("maxver", m_editor.value_text(*m_general, "cuda-maxver"));
    }
    if (cuda->python_depends) {
      entries.emplace_back("python-depends", toml_inline_array(*cuda->python_depends));
    }
    return m_editor.insert_table_after(*m_general, "general.cuda", entries);
  }

  std::optional<std::vector<std::string>> original_strings(std::string_view key) const {
    const auto* array = m_general->get_as<toml::array>(key);
    if (array == nullptr) {
      return std::nullopt;
    }
    std::vector<std::string> values;
    for (const auto& element : *array) {
      values.push_back(element.value_or(std::string()));
    }
    return values;
  }

  // Edition 3 without a framework table is noarch; a universal (v1/v2) torch extension too.
  bool framework() {
    const auto* torch = table_at(m_root, "torch");
    if (torch == nullptr && !m_root.contains("tvm-ffi") && !m_root.contains("torch-noarch")) {
      m_editor.insert_table_before_kernels("torch-noarch", {});
      return true;
    }
    if (torch == nullptr || m_edition > 2) {
      return true;
    }
    const bool noarch = std::holds_alternative<TorchNoarch>(m_target.framework);
    if (noarch && !m_editor.rename_header(*torch, "torch", "torch-noarch")) {
      return false;
    }
    for (auto key : {"universal", "include", "src", "minver", "maxver"}) {
      const bool goes = std::string_view(key) == "universal" || noarch;
      if (goes && torch->contains(key) && !m_editor.remove(*torch, key)) {
        return false;
      }
    }
    return true;
  }

  // Edition 1 named a kernel's `language` where edition 5 tags its `backend`; a cuda-hipify
  // kernel is also built for ROCm, as a twin "<name>_rocm" (the reader's expansion).
  bool edition1_kernels() {
    const auto* kernels = table_at(m_root, "kernel");
    if (kernels == nullptr) {
      return true;
    }
    for (auto&& [name, node] : *kernels) {
      const auto* kernel = node.as_table();
      if (kernel == nullptr || kernel->contains("backend")) {
        continue;
      }
      const auto language = (*kernel)["language"].value_or(std::string("cuda"));
      const bool metal = language == "metal";
      const auto backend = toml_string(metal ? "metal" : "cuda");
      // `backend` takes the place of `language` (and keeps its comment) when there is one.
      const bool tagged = kernel->contains("language")
                              ? m_editor.replace_entry(*kernel, "language", "backend", backend)
                              : m_editor.insert_first(*kernel, "backend", backend);
      if (!tagged) {
        return false;
      }
      if (language == "cuda-hipify" && !add_rocm_twin(*kernel, std::string(name.str()))) {
        return false;
      }
      for (auto key : {"rocm-archs", "cuda-capabilities"}) {
        const bool goes = std::string_view(key) != "cuda-capabilities" || metal;
        if (goes && kernel->contains(key) && !m_editor.remove(*kernel, key)) {
          return false;
        }
      }
    }
    return true;
  }

  bool add_rocm_twin(const toml::table& kernel, const std::string& name) {
    TomlEntries entries = {{"backend", toml_string("rocm")}};
    for (auto key : {"depends", "rocm-archs", "include", "src"}) {
      if (kernel.contains(key)) {
        entries.emplace_back(key, m_editor.value_text(kernel, key));
      }
    }
    return m_editor.insert_table_after(kernel, fmt::format("kernel.{}", toml_key(name + "_rocm")),
                                       entries);
  }

  const toml::table& m_root;
  TomlTextEditor& m_editor;
  int m_edition;
  const BuildConfig& m_target;
  const toml::table* m_general = nullptr;
};

// Forwards what the reader finds, minus its advice to run update-build: that is what we do.
class ReaderSink : public util::DiagnosticSink {
 public:
  explicit ReaderSink(util::DiagnosticSink& target) : m_target(target) {}
  void report(util::Diagnostic diagnostic) override {
    if (diagnostic.severity != util::Severity::error &&
        diagnostic.hint.find("update-build") != std::string::npos) {
      return;
    }
    m_target.report(std::move(diagnostic));
  }

 private:
  util::DiagnosticSink& m_target;
};

// True when `text` reads as an edition-5 file without errors and describes `expected`.
bool reads_back_as(std::string_view text, const std::string& file_name,
                   const BuildConfig& expected) {
  util::DiagnosticCollector collector;
  const auto loaded = read_build_config(text, file_name, collector);
  return loaded && loaded->source_edition == k_current_edition && loaded->config == expected;
}

// Editions 1-3 may lack `license`; edition 5 requires one and there is no sensible default.
void report_missing_license(const toml::table& general, int edition, std::string_view text,
                            const std::string& file_name, util::DiagnosticSink& sink) {
  const auto& begin = general.source().begin;
  util::Diagnostic diagnostic;
  diagnostic.location = util::SourceLocation{file_name, begin.line, begin.column};
  diagnostic.message = "the `license` key is required in the `general` section";
  diagnostic.hint =
      edition >= 3
          ? "add the kernel's SPDX license to [general], e.g. license = \"Apache-2.0\", or pass "
            "it with --license"
          : fmt::format(
                "edition {} has no `license` key: pass the kernel's SPDX license with "
                "--license, e.g. --license Apache-2.0",
                edition);
  diagnostic.source_line = std::string(util::line_of(text, begin.line));
  sink.report(std::move(diagnostic));
}

}  // namespace

util::Expected<BuildTomlUpgrade> upgrade_build_toml_text(std::string_view text,
                                                         const std::string& file_name,
                                                         util::DiagnosticSink& sink,
                                                         const UpgradeOptions& options) {
  const auto failure = [&] {
    return util::fail(fmt::format("cannot update build configuration: {} has errors", file_name));
  };
  ReaderSink forward(sink);
  const auto loaded = read_build_config(text, file_name, forward);
  if (!loaded) {
    return failure();
  }
  BuildTomlUpgrade upgrade{std::string(text), loaded->source_edition, UpgradeMethod::unchanged};
  if (loaded->source_edition == k_current_edition && !options.canonical) {
    return upgrade;
  }
  // The reader parsed this text, so toml++ does too.
  const auto root = toml::parse(text, std::string_view(file_name));
  const auto* general = table_at(root, "general");
  auto target = loaded->config;
  if (general != nullptr && !general->contains("license")) {
    if (!options.license) {
      report_missing_license(*general, loaded->source_edition, text, file_name, sink);
      return failure();
    }
    target.general.license = *options.license;
  }

  TomlTextEditor editor(text, root);
  if (!options.canonical && EditPlan(root, editor, loaded->source_edition, target).run()) {
    auto edited = editor.result();
    if (edited && reads_back_as(*edited, file_name, target)) {
      upgrade.text = std::move(*edited);
      upgrade.method = UpgradeMethod::edited;
      return upgrade;
    }
  }
  upgrade.text = write_build_toml(target);
  upgrade.method = UpgradeMethod::rewritten;
  if (!reads_back_as(upgrade.text, file_name, target)) {
    return util::fail(fmt::format(
        "cannot update build configuration: the edition-{} text written for {} does not read "
        "back as the same build (a kernel-builder bug)",
        k_current_edition, file_name));
  }
  if (options.canonical) {
    if (upgrade.text == text) {
      upgrade.method = UpgradeMethod::unchanged;
    }
    return upgrade;
  }
  sink.warning(util::SourceLocation{file_name, 1, 1},
               fmt::format("{} was re-serialised from edition {}: its comments and layout were "
                           "not kept",
                           file_name, loaded->source_edition),
               "compare with the old file (e.g. `git diff`) and copy back the comments you need");
  return upgrade;
}

util::Expected<std::string> upgrade_build_toml(std::string_view text, const std::string& file_name,
                                               util::DiagnosticSink& sink,
                                               const UpgradeOptions& options) {
  auto upgrade = KH_TRY(upgrade_build_toml_text(text, file_name, sink, options));
  return std::move(upgrade.text);
}

}  // namespace kernelhub::config
