// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/torch_versions_env.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/util/file_io.hpp>

#include <kernelhub/builder/step.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// What `import torch` needs besides torch's own CUDA libraries (torch's Requires-Dist minus
// the nvidia, cuda and triton wheels and setuptools, which only cpp_extension uses).
constexpr const char* k_import_requirements[] = {"filelock", "typing-extensions", "sympy",
                                                 "networkx", "jinja2", "fsspec"};

constexpr const char* k_purelib_script = "import sysconfig; print(sysconfig.get_paths()['purelib'])";
constexpr const char* k_import_script = "import torch; print(torch.__version__)";

// An exclusive flock held for the object's lifetime.
class FileLock {
 public:
  static util::Expected<FileLock> acquire(const fs::path& path, std::string_view what) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return util::fail(fmt::format("cannot open the lock file \"{}\": {}", path.string(),
                                    std::strerror(errno)));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      std::fprintf(stderr, "kernel-builder: waiting for another build to finish %s\n",
                   std::string(what).c_str());
      while (::flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
          const auto message = fmt::format("cannot lock \"{}\": {}", path.string(),
                                           std::strerror(errno));
          ::close(fd);
          return util::fail(message);
        }
      }
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock() {
    if (m_fd >= 0) {
      ::close(m_fd);  // closing releases the flock
    }
  }

 private:
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

util::Expected<void> run_step(CommandRunner& runner, const Command& command,
                              std::string_view what) {
  const auto status = KH_TRY(runner.run(command));
  if (status != 0) {
    return util::fail(fmt::format("{} failed: `{}` exited with status {}; see its output above",
                                  what, fmt::join(command.argv, " "), status));
  }
  return {};
}

std::optional<fs::path> purelib(CommandRunner& runner, const fs::path& python) {
  auto out = runner.capture({{python.string(), "-c", k_purelib_script}, {}});
  if (!out) {
    return std::nullopt;
  }
  while (!out->empty() && (out->back() == '\n' || out->back() == '\r')) {
    out->pop_back();
  }
  return fs::path(*out);
}

bool imports_torch(CommandRunner& runner, const fs::path& python) {
  return runner.capture({{python.string(), "-c", k_import_script}, {}}).has_value();
}

// Runs the install step `step` makes for `installer`; one uv fails is done again with the
// environment's pip.
util::Expected<void> run_install(CommandRunner& runner, const TorchEnvInstaller& installer,
                                 const std::function<Command(const TorchEnvInstaller&)>& step,
                                 std::string_view what) {
  if (!installer.uv) {
    return run_step(runner, step(installer), what);
  }
  const auto status = KH_TRY(runner.run(step(installer)));
  if (status == 0) {
    return {};
  }
  std::fprintf(stderr, "kernel-builder: %s with uv failed (status %d); trying pip\n",
               std::string(what).c_str(), status);
  return run_step(runner, step(installer.with_pip()), what);
}

// The lean install; false when its torch does not import with the borrowed CUDA libraries.
util::Expected<bool> make_lean_env(const TorchEnvLayout& layout, const fs::path& base_python,
                                   const fs::path& base_nvidia,
                                   const variants::ReleaseVersion& torch,
                                   const TorchEnvInstaller& installer, CommandRunner& runner) {
  const auto command = [&](std::size_t index) {
    return [&, index](const TorchEnvInstaller& who) {
      return lean_torch_env_commands(layout, base_python, torch, who)[index];
    };
  };
  KH_STEP(run_step(runner, command(0)(installer), "creating the virtual environment"));
  KH_STEP(run_install(runner, installer, command(1),
                      fmt::format("installing {}", torch_requirement(torch))));
  KH_STEP(run_install(runner, installer, command(2), "installing the packages torch imports"));
  const auto site = purelib(runner, layout.python);
  if (!site) {
    return util::fail(fmt::format("\"{}\" cannot report its site-packages", layout.python.string()));
  }
  std::error_code error;
  fs::create_directory_symlink(base_nvidia, *site / "nvidia", error);
  if (error) {
    return util::fail(fmt::format("cannot link \"{}\" into \"{}\": {}", base_nvidia.string(),
                                  site->string(), error.message()));
  }
  if (imports_torch(runner, layout.python)) {
    return true;
  }
  fs::remove(*site / "nvidia", error);
  return false;
}

// uv's options for pip's index settings in the environment: `uv pip` reads UV_* variables and
// its own configuration, not pip's.
std::vector<std::string> uv_index_options(const TorchEnvInstaller& installer) {
  std::vector<std::string> options;
  if (!installer.env) {
    return options;
  }
  if (auto url = installer.env("PIP_INDEX_URL"); url && !url->empty()) {
    options.insert(options.end(), {"--index-url", *url});
  }
  for (const auto& [variable, option] : {std::pair{"PIP_EXTRA_INDEX_URL", "--extra-index-url"},
                                         std::pair{"PIP_FIND_LINKS", "--find-links"}}) {
    if (auto value = installer.env(variable)) {
      std::istringstream words(*value);  // pip separates several values by whitespace
      for (std::string word; words >> word;) {
        options.insert(options.end(), {option, word});
      }
    }
  }
  return options;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace

fs::path torch_envs_root() {
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache != '\0') {
    return fs::path(cache) / "kernelhub" / "torch-envs";
  }
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : ".") / ".cache" / "kernelhub" / "torch-envs";
}

TorchEnvLayout torch_env_layout(const fs::path& root, const variants::ReleaseVersion& torch) {
  const auto name = torch.to_string();
  const auto dir = root / name;
  return {dir, dir / "bin" / "python", dir / ".kernelhub-ready", root / (name + ".lock")};
}

std::string torch_requirement(const variants::ReleaseVersion& torch) {
  return fmt::format("torch=={}.*", torch.to_string());
}

std::vector<Command> lean_torch_env_commands(const TorchEnvLayout& layout,
                                             const fs::path& base_python,
                                             const variants::ReleaseVersion& torch,
                                             const TorchEnvInstaller& installer) {
  std::vector<std::string> install;
  if (installer.uv) {
    // Compiled as pip compiles them: an interpreter that may not write .pyc files
    // (PYTHONDONTWRITEBYTECODE, a read-only cache) would otherwise compile torch's modules at
    // every import.
    install = {installer.uv->string(), "pip", "install", "--python", layout.python.string(),
               "--compile-bytecode"};
    if (!installer.show_progress) {
      install.push_back("--no-progress");
    }
    const auto index = uv_index_options(installer);
    install.insert(install.end(), index.begin(), index.end());
  } else {
    install = {layout.python.string(), "-m", "pip", "install", "--disable-pip-version-check"};
    if (!installer.show_progress) {
      install.insert(install.end(), {"--progress-bar", "off"});
    }
  }
  auto install_torch = install;
  install_torch.insert(install_torch.end(), {"--no-deps", torch_requirement(torch)});
  auto install_requirements = install;
  install_requirements.insert(install_requirements.end(), std::begin(k_import_requirements),
                              std::end(k_import_requirements));
  return {Command{{base_python.string(), "-m", "venv", layout.dir.string()}, {}},
          Command{install_torch, {}}, Command{install_requirements, {}}};
}

std::optional<fs::path> find_uv(const fs::path& base_python, CommandRunner& runner) {
  if (const char* off = std::getenv("KERNELHUB_NO_UV"); off != nullptr && *off != '\0') {
    return std::nullopt;
  }
  const auto beside = base_python.parent_path() / "uv";
  if (base_python.has_parent_path() && ::access(beside.c_str(), X_OK) == 0) {
    return beside;
  }
  return runner.find_program("uv");
}

util::Expected<fs::path> ensure_torch_env(const fs::path& root,
                                          const variants::ReleaseVersion& torch,
                                          const fs::path& base_python, CommandRunner& runner) {
  const auto layout = torch_env_layout(root, torch);
  std::error_code error;
  fs::create_directories(root, error);
  if (error) {
    return util::fail(fmt::format("cannot create the torch environment cache \"{}\": {}",
                                  root.string(), error.message()));
  }
  const auto what = fmt::format("the torch {} environment in \"{}\"", torch.to_string(),
                                layout.dir.string());
  const auto lock = KH_TRY(FileLock::acquire(layout.lock, "making " + what));
  if (fs::exists(layout.ready)) {
    return layout.python;
  }
  fs::remove_all(layout.dir, error);  // a half-made environment from an interrupted build
  if (error) {
    return util::fail(fmt::format("cannot remove the unfinished environment \"{}\": {}",
                                  layout.dir.string(), error.message()));
  }
  std::fprintf(stderr, "kernel-builder: making %s (once; later builds reuse it)\n", what.c_str());
  const TorchEnvInstaller installer{find_uv(base_python, runner), stderr_is_terminal(),
                                    hub::process_environment()};

  bool ready = false;
  const auto base_site = purelib(runner, base_python);
  if (base_site && fs::is_directory(*base_site / "nvidia")) {
    ready = KH_TRY(make_lean_env(layout, base_python, *base_site / "nvidia", torch, installer,
                                 runner));
    if (!ready) {
      std::fprintf(stderr, "kernel-builder: torch %s does not import with the CUDA libraries of "
                           "\"%s\"; installing its own (several GB)\n",
                   torch.to_string().c_str(), base_python.string().c_str());
    }
  } else {
    KH_STEP(run_step(runner,
                     lean_torch_env_commands(layout, base_python, torch, installer)[0],
                     "creating the virtual environment"));
  }
  if (!ready) {
    const auto with_dependencies = [&](const TorchEnvInstaller& who) {
      auto full = lean_torch_env_commands(layout, base_python, torch, who)[1];
      full.argv.erase(std::find(full.argv.begin(), full.argv.end(), "--no-deps"));
      return full;
    };
    KH_STEP(run_install(runner, installer, with_dependencies,
                        fmt::format("installing {}", torch_requirement(torch))));
    if (!imports_torch(runner, layout.python)) {
      return util::fail(fmt::format("torch {} was installed into \"{}\" but cannot be imported; "
                                    "run `{} -c \"import torch\"` to see why",
                                    torch.to_string(), layout.dir.string(),
                                    layout.python.string()));
    }
  }
  KH_STEP(util::write_file_atomic(layout.ready, torch_requirement(torch) + "\n"));
  return layout.python;
}

}  // namespace kernelhub::builder
