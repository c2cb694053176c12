// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <kernelhub/codegen/card.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../test_support.hpp"
#include "../config/reader_test_support.hpp"

namespace kernelhub::codegen {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

using config::testing::parse_config;

using kernelhub::testing::write;

constexpr std::string_view k_config = R"([general]
name = "act-fn"
version = 3
edition = 5
license = "Apache-2.0"
backends = ["cuda", "cpu"]
upstream = "git@github.com:someone/act.git"
source = "https://github.com/us/act-fn"

[general.hub]
repo-id = "kernels-community/act-fn"

[torch]
src = ["torch-ext/torch_binding.cpp"]
)";

TEST(Card, ReadsFactsFromTheKernel) {
  write("k/torch-ext/act_fn/__init__.py", "__all__ = ['layers', 'gelu', 'silu']\n");
  write("k/torch-ext/act_fn/layers.py",
        "class Gelu:\n    def forward(self, x):\n        pass\nclass Silu:\n    pass\n");
  write("k/benchmarks/benchmark.py", "");
  write("k/build/torch215-cxx11-cpu-x86_64-linux/metadata.json", "{}");
  fs::create_directories("k/build/not-a-variant");
  write("k/build/.kernelhub/x/metadata.json", "{}");

  const auto facts = read_card_facts(parse_config(k_config), "k", std::nullopt);
  ASSERT_TRUE(facts.has_value()) << facts.error().message;
  EXPECT_EQ(facts->repo_id, "kernels-community/act-fn");
  EXPECT_EQ(facts->version, 3u);
  EXPECT_EQ(facts->functions, (Names{"gelu", "silu"}));
  EXPECT_EQ(facts->layers, (Names{"Gelu", "Silu"}));
  EXPECT_EQ(facts->layer_forwards, (std::map<std::string, std::string>{{"Gelu", "self, x"}}));
  EXPECT_TRUE(facts->has_benchmark);
  EXPECT_EQ(facts->upstream, "git@github.com:someone/act.git");
  EXPECT_EQ(facts->source, "https://github.com/us/act-fn");
  EXPECT_EQ(facts->license, "apache-2.0");
  EXPECT_EQ(facts->backends, (Names{"cuda", "cpu"}));
  EXPECT_EQ(facts->variants, (Names{"torch215-cxx11-cpu-x86_64-linux"}));
}

TEST(Card, LayersOnlyWhenExportedAndPackageWinsOverModule) {
  write("k/torch-ext/act_fn/__init__.py", "__all__ = ['gelu']\n");
  write("k/torch-ext/act_fn/layers/__init__.py", "class FromPackage: pass\n");
  const auto config = parse_config(k_config);
  auto facts = read_card_facts(config, "k", std::nullopt);
  ASSERT_TRUE(facts.has_value());
  EXPECT_EQ(facts->layers, std::nullopt);
  EXPECT_FALSE(facts->has_benchmark);

  write("k/torch-ext/act_fn/__init__.py", "__all__ = ['layers']\n");
  write("k/torch-ext/act_fn/layers.py", "class FromModule: pass\n");
  facts = read_card_facts(config, "k", std::nullopt);
  ASSERT_TRUE(facts.has_value());
  EXPECT_EQ(facts->functions, std::nullopt);  // only "layers" leaves no functions
  EXPECT_EQ(facts->layers, (Names{"FromPackage"}));
}

TEST(Card, RepoIdIsRequiredUnlessGiven) {
  auto config = parse_config(k_config);
  config.general.hub.reset();
  const auto refused = read_card_facts(config, "k", std::nullopt);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("`repo-id` is not set in [general.hub]"),
            std::string::npos);
  const auto given = read_card_facts(config, "k", "me/act");
  ASSERT_TRUE(given.has_value());
  EXPECT_EQ(given->repo_id, "me/act");
  EXPECT_EQ(given->functions, std::nullopt);  // no package at all
}

TEST(Card, RendersTheReferenceContextNames) {
  CardFacts facts;
  facts.repo_id = "me/relu";
  facts.version = 2;
  facts.functions = Names{"relu", "relu_"};
  facts.license = "mit";
  const auto card = render_card(
      "{% if license %}license: {{ license }}\n{% endif %}"
      "get_kernel(\"{{ repo_id }}\", version={{ version }}).{{ functions[0] }}\n"
      "{% for f in functions %}- {{ f }}\n{% endfor %}"
      "{% if layers %}layers{% endif %}{% if has_benchmark %}bench{% endif %}"
      "upstream={{ upstream }}\n",
      "CARD.md", facts);
  ASSERT_TRUE(card.has_value()) << card.error().message;
  EXPECT_EQ(*card,
            "license: mit\nget_kernel(\"me/relu\", version=2).relu\n- relu\n- relu_\n"
            "upstream=none");
}

TEST(Card, DefaultTemplateRendersEveryFact) {
  ASSERT_FALSE(default_card_template().empty());
  CardFacts facts;
  facts.repo_id = "me/relu";
  facts.kernel_name = "relu";
  facts.python_name = "relu";
  facts.functions = Names{"relu"};
  facts.layers = Names{"ReLU"};
  facts.has_benchmark = true;
  facts.upstream = "https://github.com/up/relu";
  facts.source = "https://github.com/me/relu";
  facts.license = "apache-2.0";
  facts.backends = {"cpu", "cuda"};
  facts.variants = {"torch215-cxx11-cpu-x86_64-linux"};
  const auto card = render_card(default_card_template(), "templates/card/CARD.md", facts);
  ASSERT_TRUE(card.has_value()) << card.error().message;
  for (const std::string_view needle :
       {"library_name: kernels\n", "license: apache-2.0\n",
        "get_kernel(\"me/relu\", version=1, trust_remote_code=True)\n", "kernel.relu(...)",
        "[`me/relu`](https://huggingface.co/kernels/me/relu)",
        "class ReLU(torch.nn.Module):  # a layer of your model\n"
        "    def forward(self, *args, **kwargs):\n",
        "mapping = {\"ReLU\": { \"cpu\": repository, \"cuda\": repository }}", "- `ReLU`", "Backends: cpu, cuda.", "- `torch215-cxx11-cpu-x86_64-linux`",
        "kernels benchmark me/relu --version 1", "https://github.com/up/relu",
        "https://github.com/me/relu"}) {
    EXPECT_NE(card->find(needle), std::string::npos) << needle << "\n" << *card;
  }
  EXPECT_EQ(card->find("{{"), std::string::npos);
  EXPECT_EQ(card->find("HF_ENDPOINT"), std::string::npos);  // huggingface.co needs none

  CardFacts bare;
  bare.repo_id = "me/bare";
  bare.kernel_name = "bare";
  const auto minimal = render_card(default_card_template(), "templates/card/CARD.md", bare);
  ASSERT_TRUE(minimal.has_value()) << minimal.error().message;
  EXPECT_EQ(minimal->find("## Layers"), std::string::npos);
  EXPECT_EQ(minimal->find("## Benchmarks"), std::string::npos);
  EXPECT_EQ(minimal->find("license:"), std::string::npos);
}

// Issue 22 §8: the examples are right for the hub the card is written for.
TEST(Card, ContextNamesTheHubTheTrustAndTheBackend) {
  CardFacts facts;
  facts.repo_id = "team/relu";
  facts.backends = {"cpu"};
  facts.hub_url = "http://127.0.0.1:8000";
  facts.repo_url_prefix = "kernels/";
  auto context = card_context(facts);
  EXPECT_EQ(context["hub_endpoint"], "http://127.0.0.1:8000");
  EXPECT_EQ(context["repo_url"], "http://127.0.0.1:8000/kernels/team/relu");
  EXPECT_EQ(context["load_backend"], "cpu");
  EXPECT_EQ(context["trusted_publisher"], false);

  facts.hub_url = std::string(k_huggingface_url);
  facts.backends = {"cuda", "metal", "cpu"};
  facts.trusted_publisher = true;
  context = card_context(facts);
  EXPECT_TRUE(context["hub_endpoint"].is_null());
  EXPECT_TRUE(context["load_backend"].is_null());  // the loader's own pick is right
  EXPECT_EQ(context["layer_devices"], (nlohmann::json{"cuda", "mps", "cpu"}));

  facts.functions = Names{"relu"};
  const auto card = render_card(default_card_template(), "templates/card/CARD.md", facts);
  ASSERT_TRUE(card.has_value()) << card.error().message;
  EXPECT_NE(card->find("kernel = get_kernel(\"team/relu\", version=1)\n"), std::string::npos)
      << *card;
}

}  // namespace
}  // namespace kernelhub::codegen
