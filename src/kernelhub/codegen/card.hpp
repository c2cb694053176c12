// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/expected.hpp>

// `kernel-builder fill-card`: the kernel card (CARD.md, the Hub README of the kernel) rendered
// from a Jinja template with facts read from the kernel (builder.md §8).
namespace kernelhub::codegen {

// The public Hub, for which a card needs no HF_ENDPOINT.
inline constexpr std::string_view k_huggingface_url = "https://huggingface.co";

// What a card template can use. The first eight are the reference's context, with the same
// meaning; the rest are ours.
struct CardFacts {
  std::string repo_id;
  std::uint64_t version = 1;
  // `__all__` of the kernel's package without "layers"; nullopt when that leaves nothing.
  std::optional<std::vector<std::string>> functions;
  // Classes of the package's layers module, only when `__all__` exports "layers".
  std::optional<std::vector<std::string>> layers;
  bool has_benchmark = false;             // benchmarks/benchmark.py exists
  std::optional<std::string> upstream;    // as written in build.toml
  std::optional<std::string> source;
  std::optional<std::string> license;     // lowercased, as the Hub's front matter wants
  std::string kernel_name;                // "silu-and-mul"
  std::string python_name;                // "silu_and_mul"
  std::vector<std::string> backends;      // general.backends
  std::vector<std::string> variants;      // build/<variant>/ folders with a metadata.json
  // The parameters of each layer's forward (read_forward_parameters), for the example layer.
  std::map<std::string, std::string> layer_forwards;
  // The hub the card is written for: the load examples name it (HF_ENDPOINT) unless it is
  // huggingface.co, and omit trust_remote_code only where it trusts the publisher.
  std::string hub_url = std::string(k_huggingface_url);
  bool trusted_publisher = false;
  std::string repo_url_prefix = "kernels/";  // the repository type's part of its page URL
};

// Reads the facts from `kernel_dir` and its config. `repo_id` overrides general.hub.repo-id;
// without either the card cannot be filled (the reference's refusal, with the fix).
util::Expected<CardFacts> read_card_facts(const config::BuildConfig& config,
                                          const std::filesystem::path& kernel_dir,
                                          std::optional<std::string> repo_id);

// The template context: absent optionals are `none`, so `{% if layers %}` works and a
// template printing one shows the gap instead of failing. Beyond the facts: `hub_endpoint`
// (the hub's URL, none for huggingface.co), `load_backend` ("cpu" for a kernel built only for
// cpu, which the loader would not pick where a GPU is present; else none) and `layer_devices`
// (the kernelize device types of the backends).
nlohmann::json card_context(const CardFacts& facts);

// Our default card (templates/card/CARD.md), used when the kernel has no CARD.md.
std::string_view default_card_template();

// Renders `template_text` (named `template_name` in errors) with trim_blocks, as the
// reference does.
util::Expected<std::string> render_card(std::string_view template_text,
                                        const std::string& template_name,
                                        const CardFacts& facts);

}  // namespace kernelhub::codegen
