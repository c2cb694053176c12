// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/util/file_io.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

// Replays a build without running anything: `ninja` "compiles" by writing the module file.
class FakeRunner final : public CommandRunner {
 public:
  std::vector<Command> runs;
  std::set<std::string> programs = {"python3", "cmake", "ninja", "c++"};
  std::optional<std::string> probe = R"({"torch": "2.15.0", "cxx11_abi": true, "cuda": null,
      "machine": "x86_64", "system": "linux", "cmake_prefix_path": "/venv/torch/share/cmake"})";
  // The build tree names the module without the unique part; the variant gets the id.
  std::string module_name = "_relu_cpu.abi3.so";
  int ninja_status = 0;

  std::string ninja_output;  // what a failing ninja printed

  util::Expected<int> run(const Command& command) override {
    runs.push_back(command);
    // A sandboxed step is "bwrap <options> -- <the step>".
    auto argv = command.argv;
    if (argv.front().ends_with("bwrap")) {
      argv.erase(argv.begin(), std::find(argv.begin(), argv.end(), "--") + 1);
    }
    if (argv.front() == "ninja") {
      if (ninja_status != 0) {
        if (command.on_failure) {
          command.on_failure(ninja_output);
        }
        return ninja_status;
      }
      fs::create_directories(argv.at(2));
      std::ofstream(fs::path(argv.at(2)) / module_name) << "not really ELF";
    }
    return 0;
  }
  std::optional<std::string> capture(const Command& command) override {
    runs.push_back(command);
    return probe;
  }
  std::optional<fs::path> find_program(const std::string& program) override {
    if (programs.count(program) == 0) {
      return std::nullopt;
    }
    return fs::path("/usr/bin") / program;
  }
};

using kernelhub::testing::write;

void write_relu_kernel() {
  write("relu/build.toml", R"([general]
name = "relu"
version = 2
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
python-depends = ["einops"]

[torch]
src = ["torch-ext/torch_binding.cpp"]
pyext = ["py", "json"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]

# cuda needs a kernel of its own, or it would be built as noarch torch-cuda.
[kernel.relu_cuda]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
)");
  write("relu/torch-ext/relu/__init__.py", "from ._ops import ops\n");
  write("relu/torch-ext/relu/layers/__init__.py", "\n");
  write("relu/torch-ext/relu/table.json", "{}\n");
  write("relu/torch-ext/relu/notes.txt", "not packaged\n");
  write("relu/torch-ext/relu/__pycache__/x.cpython-311.pyc", "bytecode");
}

BuildOptions options_with_id() {
  BuildOptions options;
  options.sandbox = Sandboxing::off;  // the sandbox's own tests turn it on
  options.unique_id = "abc1234";
  options.builder_version = "0.1.0";
  return options;
}

TEST(BuildKernel, CpuBuildAssemblesTheVariant) {
  write_relu_kernel();
  FakeRunner runner;
  util::DiagnosticCollector sink;
  const auto result = build_kernel("relu", options_with_id(), runner, sink);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->variants.size(), 1U);
  const auto& built = result->variants[0];
  EXPECT_EQ(built.name, "torch215-cxx11-cpu-x86_64-linux");
  EXPECT_EQ(built.id, "_relu_cpu_abc1234");
  ASSERT_EQ(result->skipped.size(), 1U);
  EXPECT_EQ(result->skipped[0].backend, types::Backend::cuda);

  const auto variant = fs::current_path() / "relu/build/torch215-cxx11-cpu-x86_64-linux";
  EXPECT_EQ(built.path, variant);
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(variant)) {
    if (entry.is_regular_file()) {
      files.insert(entry.path().lexically_relative(variant).generic_string());
    }
  }
  EXPECT_EQ(files, (std::set<std::string>{"__init__.py", "_ops.py", "_relu_cpu_abc1234.abi3.so",
                                          "layers/__init__.py", "metadata.json", "table.json"}));
  const auto ops = util::read_file(variant / "_ops.py").value();
  EXPECT_NE(ops.find("ops = torch.ops._relu_cpu_abc1234"), std::string::npos);

  const auto meta = nlohmann::json::parse(util::read_file(variant / "metadata.json").value());
  EXPECT_EQ(meta["name"], "relu");
  EXPECT_EQ(meta["id"], "_relu_cpu_abc1234");
  EXPECT_EQ(meta["version"], 2);
  EXPECT_EQ(meta["python-depends"], nlohmann::json::array({"einops"}));
  EXPECT_EQ(meta["kernel-depends"], nlohmann::json::array());
  EXPECT_EQ(meta["backend"], nlohmann::json({{"type", "cpu"}}));
  EXPECT_EQ(meta["digest"]["algorithm"], "sha256");
  EXPECT_EQ(meta["digest"]["files"].size(), 5U);
  EXPECT_TRUE(meta["digest"]["files"].contains("_relu_cpu_abc1234.abi3.so"));
  EXPECT_EQ(meta["provenance"]["kernel-builder"]["version"], "0.1.0");
  EXPECT_FALSE(meta["provenance"].contains("kernel")) << "not built from git";
}

TEST(BuildKernel, PassesWhatTheProbeKnowsAndTheArchiveCacheToTheConfigure) {
  write_relu_kernel();
  FakeRunner runner;
  runner.probe = R"({"torch": "2.15.0", "cxx11_abi": true, "cuda": null, "machine": "x86_64",
      "system": "linux", "cmake_prefix_path": "/venv/torch/share/cmake",
      "python_include": "/py/include/python3.11"})";
  auto options = options_with_id();
  options.probe_cache = fs::current_path() / "cache" / "probes";
  int compiles = 0;
  options.on_compile = [&compiles] { ++compiles; };
  util::DiagnosticCollector sink;
  ASSERT_TRUE(build_kernel("relu", options, runner, sink).has_value());
  const auto configure = std::find_if(runner.runs.begin(), runner.runs.end(), [](const auto& c) {
    return c.argv.front() == "cmake";
  });
  ASSERT_NE(configure, runner.runs.end());
  const auto has = [&](const std::string& arg) {
    return std::find(configure->argv.begin(), configure->argv.end(), arg) != configure->argv.end();
  };
  EXPECT_TRUE(has("-DKERNELHUB_PYTHON_INCLUDE_DIR=/py/include/python3.11"));
  EXPECT_TRUE(has("-DKERNELHUB_STDCXX_CACHE=" + (fs::current_path() / "cache" / "stdcxx").string()));
  // A tree configured for the first time compiles: the hook ran before the configure.
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(runner.runs.back().progress_label, "cpu");
}

TEST(BuildKernel, DrivesCMakeAndNinjaWithTheChosenPython) {
  write_relu_kernel();
  FakeRunner runner;
  runner.programs.insert("ccache");
  util::DiagnosticCollector sink;
  ASSERT_TRUE(build_kernel("relu", options_with_id(), runner, sink).has_value());
  ASSERT_EQ(runner.runs.size(), 3U);  // probe, configure, build
  EXPECT_EQ(runner.runs[0].argv.at(0), "/usr/bin/python3");
  const auto& configure = runner.runs[1].argv;
  const auto work = (fs::current_path() / "relu/build/.kernelhub/torch215-cxx11-cpu-x86_64-linux")
                        .string();
  EXPECT_EQ(configure, (std::vector<std::string>{
                           "cmake", "-S", work + "/project", "-B", work + "/cmake", "-G", "Ninja",
                           "-DCMAKE_BUILD_TYPE=Release", "-DPython_EXECUTABLE=/usr/bin/python3",
                           "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                           // from the probe, so the project need not look for torch itself
                           "-DTORCH_PACKAGE_DIR=/venv/torch"}));
  // ninja's job count is capped by cores and free memory (builder/job_limit.hpp).
  ASSERT_EQ(runner.runs[2].argv.size(), 4U);
  EXPECT_EQ((std::vector<std::string>(runner.runs[2].argv.begin(), runner.runs[2].argv.end() - 1)),
            (std::vector<std::string>{"ninja", "-C", work + "/cmake"}));
  EXPECT_TRUE(runner.runs[2].argv.back().starts_with("-j"));
  EXPECT_TRUE(fs::exists(work + "/project/CMakeLists.txt"));
  EXPECT_TRUE(fs::exists(work + "/project/torch-ext/registration.h"));
}

// CCACHE_BASEDIR set to `value` (unset for nullopt) for one scope.
class CcacheBasedir {
 public:
  explicit CcacheBasedir(const std::optional<std::string>& value) {
    if (const char* old = std::getenv("CCACHE_BASEDIR")) {
      m_old = old;
    }
    if (value) {
      ::setenv("CCACHE_BASEDIR", value->c_str(), 1);
    } else {
      ::unsetenv("CCACHE_BASEDIR");
    }
  }
  CcacheBasedir(const CcacheBasedir&) = delete;
  CcacheBasedir& operator=(const CcacheBasedir&) = delete;
  ~CcacheBasedir() {
    if (m_old) {
      ::setenv("CCACHE_BASEDIR", m_old->c_str(), 1);
    } else {
      ::unsetenv("CCACHE_BASEDIR");
    }
  }

 private:
  std::optional<std::string> m_old;
};

std::optional<std::string> env_value(const Command& command, std::string_view name) {
  for (const auto& [key, value] : command.env) {
    if (key == name) {
      return value;
    }
  }
  return std::nullopt;
}

// Issue 25: the kernel's folder is ccache's base_dir, so a copy of the kernel elsewhere hits
// the objects of this one (tests/e2e/test_build_reproducible.py builds two clones).
TEST(BuildKernel, NinjaRunsWithTheKernelsFolderAsCcachesBaseDir) {
  const CcacheBasedir unset(std::nullopt);
  const auto commands = cmake_commands("/k/build/p", "/k/build/c", "python3", true, "/k");
  ASSERT_EQ(commands.size(), 2U);
  EXPECT_EQ(env_value(commands.back(), "CCACHE_BASEDIR"), "/k");
  EXPECT_EQ(env_value(commands.front(), "CCACHE_BASEDIR"), std::nullopt);
  // Without ccache there is nothing to tell it.
  EXPECT_EQ(env_value(cmake_commands("/k/build/p", "/k/build/c", "python3", false, "/k").back(),
                      "CCACHE_BASEDIR"),
            std::nullopt);
}

TEST(BuildKernel, ABaseDirTheUserSetIsKept) {
  const CcacheBasedir mine(std::string("/home/me"));
  const auto commands = cmake_commands("/k/build/p", "/k/build/c", "python3", true, "/k");
  // Not replaced: ninja inherits the user's.
  EXPECT_EQ(env_value(commands.back(), "CCACHE_BASEDIR"), std::nullopt);
}

TEST(BuildKernel, AFailedCompileLeavesNoVariantAndKeepsTheOldOne) {
  write_relu_kernel();
  FakeRunner runner;
  util::DiagnosticCollector sink;
  ASSERT_TRUE(build_kernel("relu", options_with_id(), runner, sink).has_value());
  const auto variant = fs::path("relu/build/torch215-cxx11-cpu-x86_64-linux");
  const auto before = util::read_file(variant / "metadata.json").value();

  runner.ninja_status = 1;
  auto options = options_with_id();
  options.unique_id = "def5678";
  const auto result = build_kernel("relu", options, runner, sink);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message,
            "`ninja` failed with exit status 1 while building torch215-cxx11-cpu-x86_64-linux; "
            "see its output above");
  EXPECT_EQ(util::read_file(variant / "metadata.json").value(), before);
  for (const auto& entry : fs::directory_iterator("relu/build")) {
    const auto name = entry.path().filename().string();
    EXPECT_TRUE(name == ".kernelhub" || name == "torch215-cxx11-cpu-x86_64-linux") << name;
  }
}

TEST(BuildKernel, StepsRunInTheSandboxWithTheKernelAndTheirBuildTree) {
  write_relu_kernel();
  FakeRunner runner;
  runner.programs.insert("bwrap");
  auto options = options_with_id();
  options.sandbox = Sandboxing::on;
  util::DiagnosticCollector sink;
  ASSERT_TRUE(build_kernel("relu", options, runner, sink).has_value());
  const auto kernel = (fs::current_path() / "relu").string();
  const auto work = kernel + "/build/.kernelhub/torch215-cxx11-cpu-x86_64-linux";
  std::vector<std::vector<std::string>> steps;
  for (const auto& run : runner.runs) {
    if (run.argv.front() == "/usr/bin/bwrap" && run.argv.back() != "true") {
      steps.push_back(run.argv);
    }
  }
  ASSERT_EQ(steps.size(), 2U) << "the configure and ninja, each in the sandbox";
  for (const auto& argv : steps) {
    const auto bound = [&argv](const std::string& flag, const std::string& path) {
      for (std::size_t i = 0; i + 2 < argv.size(); ++i) {
        if (argv[i] == flag && argv[i + 1] == path && argv[i + 2] == path) {
          return true;
        }
      }
      return false;
    };
    EXPECT_TRUE(bound("--ro-bind-try", kernel));
    EXPECT_TRUE(bound("--bind", work));
  }
  EXPECT_EQ(steps[0][std::find(steps[0].begin(), steps[0].end(), "--") - steps[0].begin() + 1],
            "cmake");
  const auto meta = nlohmann::json::parse(
      util::read_file("relu/build/torch215-cxx11-cpu-x86_64-linux/metadata.json").value());
  EXPECT_FALSE(meta["provenance"].contains("sandboxed")) << "sandboxed is the default";

  // Without the sandbox: the steps run as they are, and the provenance says so.
  runner.runs.clear();
  options.sandbox = Sandboxing::off;
  ASSERT_TRUE(build_kernel("relu", options, runner, sink).has_value());
  EXPECT_TRUE(std::none_of(runner.runs.begin(), runner.runs.end(), [](const Command& run) {
    return run.argv.front() == "/usr/bin/bwrap";
  }));
  const auto unsandboxed = nlohmann::json::parse(
      util::read_file("relu/build/torch215-cxx11-cpu-x86_64-linux/metadata.json").value());
  EXPECT_EQ(unsandboxed["provenance"]["sandboxed"], false);
}

TEST(BuildKernel, AStepTheSandboxStoppedSaysWhatItTried) {
  write_relu_kernel();
  FakeRunner runner;
  runner.programs.insert("bwrap");
  runner.ninja_status = 1;
  runner.ninja_output = "curl: (6) Could not resolve host: example.invalid\n"
                        "  fetching https://example.invalid/weights.bin\n";
  auto options = options_with_id();
  options.sandbox = Sandboxing::on;
  util::DiagnosticCollector sink;
  const auto result = build_kernel("relu", options, runner, sink);
  ASSERT_FALSE(result.has_value());
  EXPECT_TRUE(result.error().message.starts_with(
      "`ninja` failed with exit status 1 while building torch215-cxx11-cpu-x86_64-linux in the "
      "build sandbox: the build tried to reach the network "
      "(\"https://example.invalid/weights.bin\"), which the sandbox forbids"))
      << result.error().message;
}

TEST(BuildKernel, NoBubblewrapFailsPointingAtNoSandbox) {
  write_relu_kernel();
  FakeRunner runner;  // no bwrap in its PATH
  auto options = options_with_id();
  options.sandbox = Sandboxing::on;
  util::DiagnosticCollector sink;
  const auto result = build_kernel("relu", options, runner, sink);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("bubblewrap (`bwrap`), which was not found"),
            std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("--no-sandbox"), std::string::npos);
}

TEST(BuildKernel, MissingToolsAreNamed) {
  write_relu_kernel();
  util::DiagnosticCollector sink;
  {
    FakeRunner runner;
    runner.probe.reset();
    const auto result = build_kernel("relu", options_with_id(), runner, sink);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().message,
              "\"/usr/bin/python3\" cannot import torch; install it with `/usr/bin/python3 -m pip "
              "install torch` or pass --python PATH");
  }
  {
    FakeRunner runner;
    runner.programs.erase("cmake");
    const auto result = build_kernel("relu", options_with_id(), runner, sink);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().message,
              "cmake was not found in PATH; install CMake 3.22 or newer (`pip install cmake`)");
  }
  {
    FakeRunner runner;
    runner.programs.erase("python3");
    const auto result = build_kernel("relu", options_with_id(), runner, sink);
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message.find("python \"python3\" was not found"), std::string::npos);
  }
}

TEST(BuildKernel, NothingBuildableSaysWhy) {
  write("k/build.toml", R"([general]
name = "kk"
version = 1
edition = 5
license = "MIT"
backends = ["cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.kk_cuda]
backend = "cuda"
depends = ["torch"]
src = ["k_cuda/k.cu"]
)");
  FakeRunner runner;
  util::DiagnosticCollector sink;
  const auto result = build_kernel("k", options_with_id(), runner, sink);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message,
            "nothing can be built on this machine: cuda: nvcc was not found in PATH, "
            "$CUDA_HOME/bin or /usr/local/cuda/bin; install the CUDA toolkit (or set CUDA_HOME "
            "to it) to build cuda kernels");
}

TEST(BuildKernel, NoarchBuildsOneVariantPerBackend) {
  write("silu/build.toml", R"([general]
name = "silu-and-mul"
version = 1
edition = 5
license = "MIT"
backends = ["cpu", "cuda"]

[torch-noarch]
cuda-capabilities = ["9.0", "8.0"]
)");
  write("silu/torch-ext/silu_and_mul/__init__.py", "from ._ops import ops\n");
  write("silu/torch-ext/silu_and_mul/kernel.txt", "every file is copied\n");
  FakeRunner runner;
  runner.programs.clear();  // noarch needs neither python nor compilers
  util::DiagnosticCollector sink;
  const auto result = build_kernel("silu", options_with_id(), runner, sink);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->variants.size(), 2U);
  EXPECT_TRUE(runner.runs.empty());
  EXPECT_TRUE(fs::exists("silu/build/torch-cpu/kernel.txt"));
  const auto cuda = nlohmann::json::parse(
      util::read_file("silu/build/torch-cuda/metadata.json").value());
  EXPECT_EQ(cuda["id"], "_silu_and_mul_cuda_abc1234");
  EXPECT_EQ(cuda["backend"]["archs"], nlohmann::json::array({"9.0", "8.0"}));
  const auto ops = util::read_file("silu/build/torch-cpu/_ops.py").value();
  EXPECT_NE(ops.find("_OPS_NAME = f\"_silu_and_mul_{get_backend()}_abc1234\""), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::builder
