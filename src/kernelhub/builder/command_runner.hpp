// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kernelhub/util/expected.hpp>

// The seam between the builder and the programs it drives (python, cmake, ninja), so tests
// can replay a build without running any of them (ninja's FakeCommandRunner).
namespace kernelhub::builder {

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH unless it contains a '/'
  std::filesystem::path cwd;      // empty: the current directory
  // Variables set (or replaced) in the child's environment; the rest is inherited.
  std::vector<std::pair<std::string, std::string>> env = {};
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs `command` with its output on our stderr (build logs must not mix with --json on
  // stdout). Returns its exit status; fails when it cannot be started.
  virtual util::Expected<int> run(const Command& command) = 0;
  // Runs `command` and returns its standard output (stderr passes through); nullopt when it
  // cannot be started or exits non-zero.
  virtual std::optional<std::string> capture(const Command& command) = 0;
  // The full path of `program` found in PATH, or nullopt.
  virtual std::optional<std::filesystem::path> find_program(const std::string& program) = 0;
};

// The real thing: fork/exec with pipes.
class SubprocessCommandRunner final : public CommandRunner {
 public:
  util::Expected<int> run(const Command& command) override;
  std::optional<std::string> capture(const Command& command) override;
  std::optional<std::filesystem::path> find_program(const std::string& program) override;
};

}  // namespace kernelhub::builder
