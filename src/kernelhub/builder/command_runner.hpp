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

// What run() does with a tool's output: pass it through as it comes (-v), or keep it and show
// it only when the tool fails, with ninja's "[37/90] ..." lines as one progress line on a
// terminal (issue 13 item 11: raw CMake and ninja output buried what a person needs).
enum class ToolOutput { stream, on_failure };

// The real thing: fork/exec with pipes.
class SubprocessCommandRunner final : public CommandRunner {
 public:
  explicit SubprocessCommandRunner(ToolOutput output = ToolOutput::stream);
  util::Expected<int> run(const Command& command) override;
  std::optional<std::string> capture(const Command& command) override;
  std::optional<std::filesystem::path> find_program(const std::string& program) override;

 private:
  ToolOutput m_output;
};

}  // namespace kernelhub::builder
