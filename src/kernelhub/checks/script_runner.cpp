// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/script_runner.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

extern char** environ;

namespace kernelhub::checks {

namespace {

// Our environment with the script's changes, as "NAME=value" strings.
std::vector<std::string> environment_for(const Script& script) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = std::string(text.substr(0, text.find('=')));
    if (script.env.contains(name) ||
        std::find(script.unset_env.begin(), script.unset_env.end(), name) !=
            script.unset_env.end()) {
      continue;
    }
    out.emplace_back(text);
  }
  for (const auto& [name, value] : script.env) {
    out.push_back(name + "=" + value);
  }
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

util::Expected<ScriptOutput> SubprocessScriptRunner::run(const Script& script) {
  if (script.argv.empty()) {
    return util::fail("no program to run");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return util::fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  const auto cwd = script.cwd.string();
  if (!cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  }
  auto argv_strings = script.argv;
  auto env_strings = environment_for(script);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return util::fail(fmt::format("cannot run \"{}\": {}", script.argv[0], std::strerror(spawned)));
  }
  ScriptOutput result;
  char buffer[4096];
  while (true) {
    const auto count = ::read(fds[0], buffer, sizeof buffer);
    if (count > 0) {
      result.output.append(buffer, static_cast<std::size_t>(count));
    } else if (count == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kernelhub::checks
