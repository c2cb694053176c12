// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/command_runner.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// Starts `command` with stdout going to `stdout_fd` (and stderr to `stderr_fd`); returns the
// child's pid.
util::Expected<pid_t> start(const Command& command, int stdout_fd, int close_fd,
                            int stderr_fd = STDERR_FILENO) {
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
    if (stderr_fd != STDERR_FILENO) {
      dup2(stderr_fd, STDERR_FILENO);
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

std::string ninja_progress(std::string_view line, std::string_view label, const fs::path& root) {
  // The count and the source, which is what a person follows; CMake's object path
  // ("CMakeFiles/<target>.dir/<source>.o") is cut down to the source.
  if (line.size() < 5 || line[0] != '[') {
    return {};
  }
  const auto close = line.find(']');
  if (close == std::string_view::npos) {
    return {};
  }
  const auto count = line.substr(1, close - 1);
  const auto slash = count.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == count.size() ||
      count.find_first_not_of("0123456789/") != std::string_view::npos) {
    return {};
  }
  auto what = line.substr(close + 1);
  const auto first = what.find_first_not_of(' ');
  what = first == std::string_view::npos ? std::string_view() : what.substr(first);
  constexpr std::string_view k_building = "Building ";
  constexpr std::string_view k_object = " object ";
  if (what.starts_with(k_building)) {
    if (const auto object = what.find(k_object); object != std::string_view::npos) {
      what = what.substr(object + k_object.size());
      if (const auto dir = what.find(".dir/"); dir != std::string_view::npos) {
        what = what.substr(dir + 5);
      }
      if (what.ends_with(".o")) {
        what.remove_suffix(2);
      }
      const auto under = root.relative_path().generic_string();
      if (root.is_absolute() && !under.empty() && what.size() > under.size() &&
          what.starts_with(under) && (under.back() == '/' || what[under.size()] == '/')) {
        what = what.substr(under.size() + (under.back() == '/' ? 0 : 1));
      }
    }
  } else if (const auto dir = what.rfind(".dir/"); dir != std::string_view::npos) {
    what = what.substr(dir + 5);
  }
  std::string out = label.empty() ? fmt::format("[{}] {}", count, what)
                                  : fmt::format("[{} {}] {}", label, count, what);
  // One terminal line: a longer one would wrap and "\r" would no longer rewrite it.
  return out.size() > 100 ? out.substr(0, 100) : out;
}

SubprocessCommandRunner::SubprocessCommandRunner(ToolOutput output) : m_output(output) {}

util::Expected<int> SubprocessCommandRunner::run(const Command& command) {
  const bool stream = m_output == ToolOutput::stream;
  if (stream && command.on_work) {
    command.on_work();
  }
  if (stream && !command.on_failure) {
    const pid_t pid = KH_TRY(start(command, STDERR_FILENO, -1));
    return wait_for(pid);
  }
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return util::fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  auto pid = start(command, out_pipe[1], out_pipe[0], out_pipe[1]);
  close(out_pipe[1]);
  if (!pid) {
    close(out_pipe[0]);
    return tl::unexpected(pid.error());
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  bool shown = false;
  bool working = false;
  std::string output;
  std::size_t line_start = 0;
  char buffer[4096];
  for (;;) {
    const auto n = read(out_pipe[0], buffer, sizeof buffer);
    if (n > 0 && stream) {
      std::fwrite(buffer, 1, static_cast<std::size_t>(n), stderr);
      output.append(buffer, static_cast<std::size_t>(n));
    } else if (n > 0) {
      output.append(buffer, static_cast<std::size_t>(n));
      for (auto end = output.find('\n', line_start); end != std::string::npos;
           end = output.find('\n', line_start)) {
        const auto progress = ninja_progress(
            std::string_view(output).substr(line_start, end - line_start),
            command.progress_label, command.progress_root);
        if (!progress.empty() && !working) {
          working = true;
          if (command.on_work) {
            command.on_work();
          }
        }
        if (tty && !progress.empty()) {
          std::fprintf(stderr, "\r\033[K%s", progress.c_str());
          shown = true;
        }
        line_start = end + 1;
      }
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out_pipe[0]);
  const int status = wait_for(*pid);
  if (shown) {
    std::fputs("\r\033[K", stderr);
  }
  if (status != 0 && !stream) {
    // The tool's whole output, only now that it matters.
    std::fwrite(output.data(), 1, output.size(), stderr);
  }
  if (status != 0 && command.on_failure) {
    command.on_failure(output);
  }
  return status;
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
