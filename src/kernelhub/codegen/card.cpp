// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/card.hpp>

#include <algorithm>
#include <cctype>
#include <span>

#include <kernelhub/codegen/card_python_reader.hpp>
#include <kernelhub/codegen/template_engine.hpp>
#include <kernelhub/metadata/built_variants.hpp>
#include <kernelhub/util/embedded_file.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::codegen {

// Defined by cmake/EmbedFiles.cmake from templates/card/.
std::span<const util::EmbeddedFile> card_template_files();

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The folder holding the kernel's Python package: tvm-ffi kernels keep it apart.
fs::path package_dir(const config::BuildConfig& config, const fs::path& kernel_dir) {
  const bool tvm_ffi = std::holds_alternative<config::TvmFfi>(config.framework);
  return kernel_dir / (tvm_ffi ? "tvm-ffi-ext" : "torch-ext") / config.general.name.python_name();
}

std::optional<std::string> read_optional(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return std::nullopt;
  }
  auto text = util::read_file(path);
  return text ? std::optional(std::move(*text)) : std::nullopt;
}

// The layers module is a package (layers/__init__.py) or a single file (layers.py): its
// classes, and the parameters of their forwards.
std::optional<std::vector<std::string>> read_layers(const fs::path& package,
                                                    std::map<std::string, std::string>& forwards) {
  for (const auto& candidate : {package / "layers" / "__init__.py", package / "layers.py"}) {
    if (const auto text = read_optional(candidate)) {
      auto classes = read_class_names(*text);
      forwards = read_forward_parameters(*text);
      return classes.empty() ? std::nullopt : std::optional(std::move(classes));
    }
  }
  return std::nullopt;
}

// The device type kernelize maps a backend to (kernels' Device(type=...)).
std::string_view device_type(std::string_view backend) {
  return backend == "metal" ? "mps" : backend;
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

util::Expected<CardFacts> read_card_facts(const config::BuildConfig& config,
                                          const fs::path& kernel_dir,
                                          std::optional<std::string> repo_id) {
  const auto& general = config.general;
  if (!repo_id && general.hub) {
    repo_id = general.hub->repo_id;
  }
  if (!repo_id || repo_id->empty()) {
    return util::fail(
        "cannot fill the card: `repo-id` is not set in [general.hub]; add it to build.toml or "
        "pass --repo-id OWNER/NAME");
  }
  CardFacts facts;
  facts.repo_id = std::move(*repo_id);
  facts.version = general.version;
  facts.kernel_name = general.name.str();
  facts.python_name = general.name.python_name();

  const auto package = package_dir(config, kernel_dir);
  std::optional<std::vector<std::string>> all;
  if (const auto init = read_optional(package / "__init__.py")) {
    all = read_dunder_all(*init);
  }
  if (all) {
    std::vector<std::string> functions;
    std::copy_if(all->begin(), all->end(), std::back_inserter(functions),
                 [](const std::string& name) { return name != "layers"; });
    if (!functions.empty()) {
      facts.functions = std::move(functions);
    }
    if (std::find(all->begin(), all->end(), "layers") != all->end()) {
      facts.layers = read_layers(package, facts.layer_forwards);
    }
  }
  std::error_code error;
  facts.has_benchmark = fs::is_regular_file(kernel_dir / "benchmarks" / "benchmark.py", error);
  if (general.upstream) {
    facts.upstream = general.upstream->original();
  }
  if (general.source) {
    facts.source = general.source->original();
  }
  if (!general.license.empty()) {
    std::string license = general.license;
    std::transform(license.begin(), license.end(), license.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    facts.license = std::move(license);
  }
  for (const auto backend : general.backends) {
    facts.backends.emplace_back(types::to_string(backend));
  }
  facts.variants = metadata::built_variant_names(kernel_dir);
  return facts;
}

json card_context(const CardFacts& facts) {
  json devices = json::array();
  for (const auto& backend : facts.backends) {
    devices.push_back(device_type(backend));
  }
  const bool cpu_only = facts.backends == std::vector<std::string>{"cpu"};
  const bool default_hub = facts.hub_url == k_huggingface_url;
  // Every layer gets a forward for the example; one the reader found none for takes anything.
  json forwards = json::object();
  for (const auto& layer : facts.layers.value_or(std::vector<std::string>{})) {
    const auto found = facts.layer_forwards.find(layer);
    forwards[layer] = found != facts.layer_forwards.end() ? found->second : "self, *args, **kwargs";
  }
  return json{{"repo_id", facts.repo_id},
              {"version", facts.version},
              {"functions", optional_json(facts.functions)},
              {"layers", optional_json(facts.layers)},
              {"has_benchmark", facts.has_benchmark},
              {"upstream", optional_json(facts.upstream)},
              {"source", optional_json(facts.source)},
              {"license", optional_json(facts.license)},
              {"kernel_name", facts.kernel_name},
              {"python_name", facts.python_name},
              {"backends", facts.backends},
              {"variants", facts.variants},
              {"layer_forwards", forwards},
              {"layer_devices", devices},
              {"hub_url", facts.hub_url},
              {"repo_url", facts.hub_url + "/" + facts.repo_url_prefix + facts.repo_id},
              {"hub_endpoint", default_hub ? json(nullptr) : json(facts.hub_url)},
              {"trusted_publisher", facts.trusted_publisher},
              {"load_backend", cpu_only ? json("cpu") : json(nullptr)}};
}

std::string_view default_card_template() {
  const auto* file = util::find_embedded(card_template_files(), "CARD.md");
  return file != nullptr ? file->data : std::string_view();
}

util::Expected<std::string> render_card(std::string_view template_text,
                                        const std::string& template_name,
                                        const CardFacts& facts) {
  // Default options, as the reference's minijinja environment: trim_blocks, and the
  // template's single final newline dropped.
  return render_template(template_text, template_name, card_context(facts));
}

}  // namespace kernelhub::codegen
