// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include <kernelhub/util/expected.hpp>

// The seam between the import check and the Python it starts, so tests can fake the process.
namespace kernelhub::checks {

struct ScriptOutput {
  int exit_code = 0;   // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved as written
  int signal = 0;      // the signal that killed it, else 0
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

// A script started now and finished later: it runs (importing what it needs) while the caller
// does other work, then gets its input on stdin. stdout and stderr go to one pipe, read by
// finish(). Destroying it unfinished kills the process (SIGKILL) and reaps it.
class StartedScript {
 public:
  // Starts `script` with a pipe on its stdin; fails when it cannot be started.
  static util::Expected<StartedScript> start(const Script& script);
  StartedScript(StartedScript&& other) noexcept;
  StartedScript& operator=(StartedScript&& other) noexcept;
  StartedScript(const StartedScript&) = delete;
  StartedScript& operator=(const StartedScript&) = delete;
  ~StartedScript();

  // Writes `input` to the script's stdin, closes it, and waits for the script to end. A script
  // that ended before reading its input is not an error: its output says why.
  ScriptOutput finish(std::string_view input);

  // Changes the process's nice value (setpriority). Raising it is always allowed; lowering it
  // again needs CAP_SYS_NICE or RLIMIT_NICE room, so it may fail: returns whether it worked.
  bool set_niceness(int niceness);

 private:
  StartedScript(pid_t pid, int input_fd, int output_fd);
  void kill_and_reap();

  pid_t m_pid = -1;
  int m_input_fd = -1;
  int m_output_fd = -1;
};

}  // namespace kernelhub::checks
