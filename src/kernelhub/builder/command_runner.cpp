// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/command_runner.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// Starts `command` with stdout going to `stdout_fd`; returns the child's pid.
util::Expected<pid_t> start(const Command& command, int stdout_fd, int close_fd) {
  if (command.argv.empty()) {
    return util::fail("cannot run an empty command");
  }
  std::vector<char*> argv;
  for (const auto& arg : command.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  // The child's environment is built before fork: only exec and _exit run in the child.
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    const bool replaced = std::any_of(command.env.begin(), command.env.end(),
                                      [name](const auto& var) { return var.first == name; });
    if (!replaced) {
      environment.emplace_back(text);
    }
  }
  for (const auto& [name, value] : command.env) {
    environment.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& entry : environment) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  // A pipe closed on exec tells the parent whether exec itself failed.
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    return util::fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    return util::fail(fmt::format("cannot fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    close(status_pipe[0]);
    if (close_fd >= 0) {
      close(close_fd);
    }
    if (stdout_fd != STDOUT_FILENO) {
      dup2(stdout_fd, STDOUT_FILENO);
    }
    if (!command.cwd.empty() && chdir(command.cwd.c_str()) != 0) {
      const int error = errno;
      (void)!write(status_pipe[1], &error, sizeof error);
      _exit(127);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(status_pipe[1], &error, sizeof error);
    _exit(127);
  }
  close(status_pipe[1]);
  int child_error = 0;
  const auto got = read(status_pipe[0], &child_error, sizeof child_error);
  close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_error)) {
    waitpid(pid, nullptr, 0);
    return util::fail(fmt::format("cannot run \"{}\": {}", command.argv[0],
                                  std::strerror(child_error)));
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

util::Expected<int> SubprocessCommandRunner::run(const Command& command) {
  const pid_t pid = KH_TRY(start(command, STDERR_FILENO, -1));
  return wait_for(pid);
}

std::optional<std::string> SubprocessCommandRunner::capture(const Command& command) {
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return std::nullopt;
  }
  auto pid = start(command, out_pipe[1], out_pipe[0]);
  close(out_pipe[1]);
  if (!pid) {
    close(out_pipe[0]);
    return std::nullopt;
  }
  std::string output;
  char buffer[4096];
  for (;;) {
    const auto n = read(out_pipe[0], buffer, sizeof buffer);
    if (n > 0) {
      output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out_pipe[0]);
  if (wait_for(*pid) != 0) {
    return std::nullopt;
  }
  return output;
}

std::optional<fs::path> SubprocessCommandRunner::find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return access(program.c_str(), X_OK) == 0 ? std::optional<fs::path>(program) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const auto dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const auto candidate = fs::path(dir.empty() ? "." : std::string(dir)) / program;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
      return candidate;
    }
  }
  return std::nullopt;
}

}  // namespace kernelhub::builder
