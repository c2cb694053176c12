// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/config/build_config.hpp>

namespace kernelhub::config {
namespace {

using types::Backend;

TEST(Dependency, RoundTripsEverySpelling) {
  ASSERT_EQ(dependency_names().size(), 11u);
  for (const auto name : dependency_names()) {
    const auto parsed = parse_dependency(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(to_string(*parsed), name);
  }
  EXPECT_EQ(parse_dependency("metal-cpp"), Dependency::metal_cpp);
  EXPECT_EQ(parse_dependency("cutlass_4_4"), Dependency::cutlass_4_4);
}

TEST(Dependency, IsCaseSensitiveAndSuggests) {
  EXPECT_EQ(parse_dependency("Torch").error().message,
            "unknown dependency \"Torch\"; did you mean \"torch\"?");
  EXPECT_EQ(parse_dependency("metal_cpp").error().message,
            "unknown dependency \"metal_cpp\"; did you mean \"metal-cpp\"?");
  EXPECT_EQ(parse_dependency("boost").error().message, "unknown dependency \"boost\"");
}

BuildConfig sample() {
  BuildConfig config{.general = {.name = types::KernelName::parse("relu").value()},
                     .framework = Torch{}};
  config.general.backends = {Backend::rocm, Backend::cuda, Backend::cpu, Backend::tpu};
  config.general.python_depends = std::vector<std::string>{"einops"};
  config.general.cuda = BackendGeneral{.python_depends = std::vector<std::string>{
                                           "nvidia-cutlass-dsl", "einops"}};
  config.general.neuron = BackendGeneral{.python_depends = std::vector<std::string>{"nki"}};
  config.kernels = {Kernel{.name = "a", .backend = Backend::cuda},
                    Kernel{.name = "b", .backend = Backend::metal},
                    Kernel{.name = "c", .backend = Backend::rocm},
                    Kernel{.name = "d", .backend = Backend::cuda}};
  return config;
}

TEST(BuildConfig, BackendsWithKernelsFollowGeneralBackends) {
  // metal has a kernel but is not a listed backend; cpu and tpu are listed without kernels.
  EXPECT_EQ(sample().backends_with_kernels(), (std::vector{Backend::rocm, Backend::cuda}));
}

TEST(BuildConfig, PythonDependsForABackendAddsItsTable) {
  const auto config = sample();
  EXPECT_EQ(config.python_depends_for(Backend::cuda),
            (std::vector<std::string>{"einops", "nvidia-cutlass-dsl"}));
  EXPECT_EQ(config.python_depends_for(Backend::cpu), std::vector<std::string>{"einops"});
  // Neuron's own list counts (the reference drops it from metadata: a bug Nix does not share).
  EXPECT_EQ(config.python_depends_for(Backend::neuron),
            (std::vector<std::string>{"einops", "nki"}));
  EXPECT_FALSE(config.is_noarch());
}

TEST(BuildConfig, BackendTableNamesTheFourBackendTables) {
  const auto config = sample();
  EXPECT_TRUE(config.general.backend_table(Backend::cuda));
  EXPECT_TRUE(config.general.backend_table(Backend::neuron));
  EXPECT_FALSE(config.general.backend_table(Backend::xpu));
  EXPECT_FALSE(config.general.backend_table(Backend::metal));
}

}  // namespace
}  // namespace kernelhub::config
