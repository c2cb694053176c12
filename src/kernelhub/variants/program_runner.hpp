// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kernelhub::variants {

// Runs a helper program and captures what it prints: the seam between system detection and
// the processes it asks (python, nvcc), so tests can describe any machine.
class ProgramRunner {
 public:
  virtual ~ProgramRunner() = default;
  // Runs `argv` (argv[0] is looked up in PATH unless it contains a '/') with stdin and stderr
  // on /dev/null. Returns its standard output, or nullopt when it cannot be started or exits
  // with a non-zero status.
  virtual std::optional<std::string> run(const std::vector<std::string>& argv) const = 0;
};

// The real thing: posix_spawnp and a pipe.
class SubprocessRunner final : public ProgramRunner {
 public:
  std::optional<std::string> run(const std::vector<std::string>& argv) const override;
};

}  // namespace kernelhub::variants
