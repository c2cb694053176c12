// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <kernelhub/builder/sandbox.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

// The value following `flag` each time it appears (for --bind A A: A).
std::vector<std::string> after(const std::vector<std::string>& argv, const std::string& flag) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag) {
      out.push_back(argv[i + 1]);
    }
  }
  return out;
}

std::ptrdiff_t position(const std::vector<std::string>& argv, const std::string& value) {
  return std::find(argv.begin(), argv.end(), value) - argv.begin();
}

TEST(Sandbox, WrapsTheCommandWithNoNetworkAndOnlyTheDeclaredFolders) {
  SandboxMounts mounts;
  // /usr/local/cuda is visible already (and may be a link, which bwrap cannot mount on).
  mounts.read_only = {"/k/relu", "/venv", "/venv/lib/python3.11/site-packages", "/venv",
                      "/usr/local/cuda"};
  mounts.writable = {"/k/relu/build/.kernelhub/v", "/home/me/.cache/ccache"};
  mounts.home = "/home/me";
  Command command{{"ninja", "-C", "/k/relu/build/.kernelhub/v/cmake", "-j2"}, "/k"};
  command.progress_label = "cpu";
  const auto wrapped = sandboxed_command(command, "/usr/bin/bwrap", mounts);
  const auto& argv = wrapped.argv;
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_NE(position(argv, "--unshare-all"), static_cast<std::ptrdiff_t>(argv.size()));
  EXPECT_NE(position(argv, "--die-with-parent"), static_cast<std::ptrdiff_t>(argv.size()));
  // The command itself, unchanged, after "--"; the rest of the Command is kept.
  const auto separator = position(argv, "--");
  EXPECT_EQ(std::vector<std::string>(argv.begin() + separator + 1, argv.end()), command.argv);
  EXPECT_EQ(wrapped.cwd, "/k");
  EXPECT_EQ(wrapped.progress_label, "cpu");
  // Nested and repeated folders are bound once; the system read-only, /tmp and HOME fresh.
  const auto read_only = after(argv, "--ro-bind-try");
  EXPECT_EQ(std::set<std::string>(read_only.begin(), read_only.end()),
            (std::set<std::string>{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                   "/libx32", "/k/relu", "/venv"}));
  EXPECT_EQ(after(argv, "--bind"),
            (std::vector<std::string>{"/home/me/.cache/ccache", "/k/relu/build/.kernelhub/v"}));
  EXPECT_EQ(after(argv, "--tmpfs"), (std::vector<std::string>{"/tmp", "/var/tmp", "/home/me"}));
  // HOME's tmpfs before what is bound inside it; the writable build tree after the read-only
  // kernel folder that holds it.
  EXPECT_LT(position(argv, "/home/me"), position(argv, "/home/me/.cache/ccache"));
  EXPECT_LT(position(argv, "/k/relu"), position(argv, "/k/relu/build/.kernelhub/v"));
  EXPECT_LT(position(argv, "/k/relu/build/.kernelhub/v"), separator);
}

TEST(Sandbox, VisibleMeansUnderTheSystemOrAMount) {
  SandboxMounts mounts;
  mounts.read_only = {"/k/relu"};
  mounts.writable = {"/cache"};
  mounts.home = "/root";
  EXPECT_TRUE(visible_in_sandbox("/usr/include/stdio.h", mounts));
  EXPECT_TRUE(visible_in_sandbox("/k/relu/relu_cpu/relu.cpp", mounts));
  EXPECT_TRUE(visible_in_sandbox("/k/relu", mounts));
  EXPECT_TRUE(visible_in_sandbox("/cache/a/b", mounts));
  EXPECT_FALSE(visible_in_sandbox("/k/relu2/x.h", mounts));
  EXPECT_FALSE(visible_in_sandbox("/tmp/outside.h", mounts));
  EXPECT_FALSE(visible_in_sandbox("/root/secret", mounts));
  EXPECT_FALSE(visible_in_sandbox("/usrx/y", mounts));
}

const auto k_everything_exists = [](const fs::path&) { return true; };

TEST(Sandbox, ExplainsADownloadTheSandboxStopped) {
  const std::string output =
      "-- The CXX compiler identification is GNU 12.2.0\n"
      "CMake Error at /k/relu/cmake/fetch.cmake:3 (message):\n"
      "  file(DOWNLOAD http://127.0.0.1:41235/data.txt) failed: 7;\"Couldn't connect\n"
      "  to server\"\n";  // CMake wraps its messages
  SandboxMounts mounts;
  mounts.read_only = {"/k/relu"};
  const auto explanation = explain_sandbox_failure(output, mounts, k_everything_exists);
  ASSERT_TRUE(explanation.has_value());
  EXPECT_EQ(*explanation,
            "the build tried to reach the network (\"http://127.0.0.1:41235/data.txt\"), which "
            "the sandbox forbids (it has no network); make what it needs part of the kernel's "
            "folder, or build without the sandbox with --no-sandbox (or KERNELHUB_NO_SANDBOX=1)");
}

TEST(Sandbox, ExplainsANameLookupWithoutAUrl) {
  const auto explanation = explain_sandbox_failure(
      "fatal: unable to access: Could not resolve host: example.invalid\n", {},
      k_everything_exists);
  ASSERT_TRUE(explanation.has_value());
  EXPECT_TRUE(explanation->starts_with(
      "the build tried to reach the network, which the sandbox forbids"))
      << *explanation;
}

TEST(Sandbox, NamesAFileOutsideTheDeclaredInputs) {
  const std::string output =
      "FAILED: CMakeFiles/_relu_cpu.dir/k/relu/relu_cpu/relu_cpu.cpp.o\n"
      "/usr/bin/c++ -I/k/relu/torch-ext -c /k/relu/relu_cpu/relu_cpu.cpp\n"
      "/k/relu/relu_cpu/relu_cpu.cpp:3:10: fatal error: /tmp/other/outside.h: No such file or "
      "directory\n"
      "    3 | #include \"/tmp/other/outside.h\"\n";
  SandboxMounts mounts;
  mounts.read_only = {"/k/relu"};
  // Only what exists outside counts: a path that exists nowhere is the build's own mistake.
  const auto exists = [](const fs::path& path) { return path == "/tmp/other/outside.h"; };
  const auto explanation = explain_sandbox_failure(output, mounts, exists);
  ASSERT_TRUE(explanation.has_value());
  EXPECT_TRUE(explanation->starts_with(
      "the build tried to read \"/tmp/other/outside.h\", outside its declared inputs"))
      << *explanation;
}

TEST(Sandbox, AnOrdinaryFailureIsNotBlamedOnTheSandbox) {
  const std::string output =
      "/k/relu/relu_cpu/relu_cpu.cpp:3:1: error: 'x' was not declared in this scope\n"
      "ninja: build stopped: subcommand failed.\n";
  SandboxMounts mounts;
  mounts.read_only = {"/k/relu"};
  EXPECT_FALSE(explain_sandbox_failure(output, mounts, k_everything_exists).has_value());
  const auto nothing_exists = [](const fs::path&) { return false; };
  EXPECT_FALSE(explain_sandbox_failure("error: /tmp/gone.h: No such file or directory\n",
                                       mounts, nothing_exists)
                   .has_value());
}

}  // namespace
}  // namespace kernelhub::builder
