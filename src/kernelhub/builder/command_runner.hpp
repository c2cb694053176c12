// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
  // ninja's progress line on a terminal names this ("cuda": "[cuda 37/90] csrc/gelu.cu"), the
  // backend of the variant it builds; empty: "[37/90] csrc/gelu.cu".
  std::string progress_label = {};
  // Sources under this folder (the kernel's) are shown relative to it in that line.
  std::filesystem::path progress_root = {};
  // Called once, when the tool shows it has work to do (ninja's first step), so that what only
  // a real build needs (the load check's interpreter) can start beside it and a no-op rebuild
  // never pays for it. With ToolOutput::stream, called before the tool starts.
  std::function<void()> on_work = {};
  // run() only: called with the tool's whole output (stdout and stderr) when it exits
  // non-zero, so the caller can explain the failure (the build sandbox names what it forbade).
  // With ToolOutput::stream the output is then copied through a pipe as it comes.
  std::function<void(std::string_view)> on_failure = {};
};

// ninja's "[37/90] Building CUDA object CMakeFiles/x.dir/csrc/gelu.cu.o" as the line a person
// follows, "[cuda 37/90] csrc/gelu.cu" with label "cuda"; "" for a line that is not a step.
// CMake names the object of a source outside its project by the source's absolute path
// without its "/": under `root`, such a source is shown relative to it.
std::string ninja_progress(std::string_view line, std::string_view label,
                           const std::filesystem::path& root = {});

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
