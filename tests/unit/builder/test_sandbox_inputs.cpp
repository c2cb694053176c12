// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/builder/sandbox_inputs.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/file_io.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

using kernelhub::testing::write;

TEST(SandboxInputs, ReadsCcachesFoldersAndConfigFiles) {
  const auto folders = parse_ccache_config(
      "(default) absolute_paths_in_stderr = false\n"
      "(/root/.config/ccache/ccache.conf) base_dir = /work\n"
      "(/root/.config/ccache/ccache.conf) hash_dir = false\n"
      "(environment) cache_dir = /srv/ccache\n"
      "(default) temporary_dir = /srv/ccache/tmp\n"
      "(/etc/ccache.conf) max_size = 5.0G\n"
      "not a config line\n");
  EXPECT_EQ(folders.writable, (std::vector<fs::path>{"/srv/ccache", "/srv/ccache/tmp"}));
  EXPECT_EQ(folders.config_files,
            (std::vector<fs::path>{"/root/.config/ccache/ccache.conf", "/etc/ccache.conf"}));
}

TEST(SandboxInputs, ReadsThePythonFoldersLeavingOutTheSystem) {
  const auto paths = parse_python_paths(
      R"(["/root/.pyenv/versions/3.11.7", "/usr/lib/python3/dist-packages", "/venv",
          "/venv/lib/python3.11/site-packages", "relative", "/", 3])");
  EXPECT_EQ(paths, (std::vector<fs::path>{"/root/.pyenv/versions/3.11.7", "/venv",
                                          "/venv/lib/python3.11/site-packages"}));
  EXPECT_TRUE(parse_python_paths("not json").empty());
}

TEST(SandboxInputs, AProgramsRootIsWhereItsBinFolderIs) {
  const auto root = fs::current_path();
  write(root / "venv/bin/cmake", "#!" + (root / "python/bin/python3.11").string() + "\nimport x\n");
  write(root / "python/bin/python3.11", "");
  write(root / "tools/ninja", "");
  fs::create_directories(root / "links/bin");
  fs::create_symlink(root / "opt/cuda-13/bin/nvcc", root / "links/bin/nvcc");
  write(root / "opt/cuda-13/bin/nvcc", "");
  EXPECT_EQ(program_roots(root / "venv/bin/cmake"),
            (std::vector<fs::path>{root / "venv", root / "python"}));
  EXPECT_EQ(program_roots(root / "tools/ninja"), (std::vector<fs::path>{root / "tools"}));
  EXPECT_EQ(program_roots(root / "links/bin/nvcc"),
            (std::vector<fs::path>{root / "links", root / "opt/cuda-13"}));
  EXPECT_TRUE(program_roots("/usr/bin/c++").empty()) << "the sandbox shows /usr anyway";
}

TEST(SandboxInputs, SourcesOutsideTheKernelFolderAreDeclaredToo) {
  const auto root = fs::current_path();
  write(root / "common/shared.cu", "");
  write(root / "relu/relu_cpu/relu.cpp", "");
  fs::create_directories(root / "elsewhere/include");
  fs::create_directories(root / "relu/linked");
  write(root / "real/kernel.cpp", "");
  fs::create_symlink(root / "real/kernel.cpp", root / "relu/linked/kernel.cpp");
  config::BuildConfig config;
  config::Kernel kernel;
  kernel.src = {"relu_cpu/relu.cpp", "../common/shared.cu", "linked/kernel.cpp"};
  kernel.include = {std::vector<std::string>{"../elsewhere/include", "relu_cpu"}};
  config.kernels.push_back(kernel);
  config.framework = config::Torch{};
  EXPECT_EQ(declared_outside_folders(config, root / "relu"),
            (std::vector<fs::path>{root / "common", root / "relu/linked", root / "real",
                                   root / "elsewhere/include"}));
}

TEST(SandboxInputs, ASandboxedBuildStartsAfreshATreeBuiltWithout) {
  const auto tree = fs::current_path() / "tree";
  ASSERT_TRUE(prepare_build_tree(tree, false).has_value());
  write(tree / "object.o", "compiled outside the sandbox");
  ASSERT_TRUE(prepare_build_tree(tree, false).has_value());
  EXPECT_TRUE(fs::exists(tree / "object.o")) << "an unsandboxed rebuild keeps its tree";
  ASSERT_TRUE(prepare_build_tree(tree, true).has_value());
  EXPECT_FALSE(fs::exists(tree));
  write(tree / "object.o", "compiled in the sandbox");
  ASSERT_TRUE(prepare_build_tree(tree, true).has_value());
  EXPECT_TRUE(fs::exists(tree / "object.o")) << "a sandboxed rebuild keeps its tree";
}

}  // namespace
}  // namespace kernelhub::builder
