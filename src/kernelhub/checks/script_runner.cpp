// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/script_runner.hpp>
#include <kernelhub/util/sigpipe_guard.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
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

// Everything `fd` yields until end of file.
std::string read_all(int fd) {
  std::string output;
  char buffer[4096];
  while (true) {
    const auto count = ::read(fd, buffer, sizeof buffer);
    if (count > 0) {
      output.append(buffer, static_cast<std::size_t>(count));
    } else if (count == 0 || errno != EINTR) {
      break;
    }
  }
  return output;
}

int wait_exit_code(pid_t pid, int* signal = nullptr) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (signal != nullptr) {
    *signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Writes `data` to a pipe whose reader may have exited: EPIPE is then an answer, not a
// reason for SIGPIPE to end this process.
void write_ignoring_closed_pipe(int fd, std::string_view data) {
  const util::SigpipeGuard guard;
  while (!data.empty()) {
    const auto count = ::write(fd, data.data(), data.size());
    if (count >= 0) {
      data.remove_prefix(static_cast<std::size_t>(count));
    } else if (errno != EINTR) {
      break;
    }
  }
}

// posix_spawn_file_actions_addchdir_np is glibc 2.29; the wheel's binaries run on 2.28
// (docs/wheels.md), so it is looked up when first needed rather than linked.
using AddChdir = int (*)(posix_spawn_file_actions_t*, const char*);
AddChdir find_add_chdir() {
  static const auto found =
      reinterpret_cast<AddChdir>(::dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addchdir_np"));
  return found;
}

// The argv that runs `argv` in `cwd`: a chdir file action where glibc has one, else the
// program started through /bin/sh, which changes directory and execs it (PATH searched as
// posix_spawnp would).
std::vector<std::string> argv_in_directory(const std::vector<std::string>& argv,
                                           const std::string& cwd,
                                           posix_spawn_file_actions_t* actions) {
  if (cwd.empty()) {
    return argv;
  }
  if (AddChdir add_chdir = find_add_chdir()) {
    add_chdir(actions, cwd.c_str());
    return argv;
  }
  std::vector<std::string> wrapped = {"/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", cwd};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

}  // namespace

util::Expected<StartedScript> StartedScript::start(const Script& script) {
  if (script.argv.empty()) {
    return util::fail("no program to run");
  }
  int output[2];
  if (::pipe2(output, O_CLOEXEC) != 0) {
    return util::fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  int input[2];
  if (::pipe2(input, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(output[0]);
    ::close(output[1]);
    return util::fail(fmt::format("cannot create a pipe: {}", std::strerror(error)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output[1], STDERR_FILENO);
  auto argv_strings = argv_in_directory(script.argv, script.cwd.string(), &actions);
  auto env_strings = environment_for(script);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(input[0]);
  ::close(output[1]);
  if (spawned != 0) {
    ::close(input[1]);
    ::close(output[0]);
    return util::fail(fmt::format("cannot run \"{}\": {}", script.argv[0], std::strerror(spawned)));
  }
  return StartedScript(pid, input[1], output[0]);
}

StartedScript::StartedScript(pid_t pid, int input_fd, int output_fd)
    : m_pid(pid), m_input_fd(input_fd), m_output_fd(output_fd) {}

StartedScript::StartedScript(StartedScript&& other) noexcept
    : m_pid(other.m_pid), m_input_fd(other.m_input_fd), m_output_fd(other.m_output_fd) {
  other.m_pid = -1;
  other.m_input_fd = -1;
  other.m_output_fd = -1;
}

StartedScript& StartedScript::operator=(StartedScript&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    m_pid = other.m_pid;
    m_input_fd = other.m_input_fd;
    m_output_fd = other.m_output_fd;
    other.m_pid = -1;
    other.m_input_fd = -1;
    other.m_output_fd = -1;
  }
  return *this;
}

StartedScript::~StartedScript() { kill_and_reap(); }

void StartedScript::kill_and_reap() {
  if (m_input_fd >= 0) {
    ::close(m_input_fd);
    m_input_fd = -1;
  }
  if (m_output_fd >= 0) {
    ::close(m_output_fd);
    m_output_fd = -1;
  }
  if (m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    (void)wait_exit_code(m_pid);
    m_pid = -1;
  }
}

bool StartedScript::set_niceness(int niceness) {
  return m_pid > 0 && ::setpriority(PRIO_PROCESS, static_cast<id_t>(m_pid), niceness) == 0;
}

ScriptOutput StartedScript::finish(std::string_view input) {
  ScriptOutput result;
  if (m_pid <= 0) {
    result.exit_code = -1;
    return result;
  }
  write_ignoring_closed_pipe(m_input_fd, input);
  ::close(m_input_fd);
  m_input_fd = -1;
  result.output = read_all(m_output_fd);
  ::close(m_output_fd);
  m_output_fd = -1;
  result.exit_code = wait_exit_code(m_pid, &result.signal);
  m_pid = -1;
  return result;
}

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
  auto argv_strings = argv_in_directory(script.argv, script.cwd.string(), &actions);
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
  result.output = read_all(fds[0]);
  ::close(fds[0]);
  result.exit_code = wait_exit_code(pid, &result.signal);
  return result;
}

}  // namespace kernelhub::checks
