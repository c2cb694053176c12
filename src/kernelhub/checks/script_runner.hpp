// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <kernelhub/util/expected.hpp>

// The seam between the import check and the Python it starts, so tests can fake the process.
namespace kernelhub::checks {

struct ScriptOutput {
  int exit_code = 0;   // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved as written
};

struct Script {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH unless it contains a '/'
  std::filesystem::path cwd;      // empty: the current directory
  std::map<std::string, std::string> env;  // set (or replaced) on top of our environment
  std::vector<std::string> unset_env;      // removed from it
};

class ScriptRunner {
 public:
  virtual ~ScriptRunner() = default;
  // Runs `script` to completion; fails only when it cannot be started.
  virtual util::Expected<ScriptOutput> run(const Script& script) = 0;
};

// The real thing: posix_spawnp, stdin from /dev/null, one pipe for stdout and stderr.
class SubprocessScriptRunner final : public ScriptRunner {
 public:
  util::Expected<ScriptOutput> run(const Script& script) override;
};

}  // namespace kernelhub::checks
