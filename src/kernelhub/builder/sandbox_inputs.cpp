// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/sandbox_inputs.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

bool is_system(const fs::path& path) {
  const auto& system = sandbox_system_paths();
  return std::any_of(system.begin(), system.end(), [&path](const fs::path& root) {
    const auto relative = path.lexically_relative(root);
    return !relative.empty() && *relative.begin() != "..";
  });
}

fs::path install_root(const fs::path& program) {
  const auto dir = program.parent_path();
  return dir.filename() == "bin" ? dir.parent_path() : dir;
}

// The interpreter a script names in its "#!" line ("#!/usr/bin/env python" names env).
std::optional<fs::path> script_interpreter(const fs::path& program) {
  std::ifstream file(program, std::ios::binary);
  std::string line;
  if (!file || !std::getline(file, line) || !line.starts_with("#!")) {
    return std::nullopt;
  }
  std::istringstream words(line.substr(2));
  std::string interpreter;
  words >> interpreter;
  if (interpreter.empty() || interpreter.front() != '/') {
    return std::nullopt;
  }
  return fs::path(interpreter);
}

void add_unique(std::vector<fs::path>& paths, const fs::path& path) {
  if (std::find(paths.begin(), paths.end(), path) == paths.end()) {
    paths.push_back(path);
  }
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

}  // namespace

std::vector<fs::path> program_roots(const fs::path& program) {
  std::vector<fs::path> roots;
  std::error_code error;
  const auto absolute = fs::absolute(program, error).lexically_normal();
  std::vector<fs::path> seen{absolute};
  const auto resolved = fs::canonical(absolute, error);
  if (!error) {
    seen.push_back(resolved);
  }
  if (const auto interpreter = script_interpreter(absolute)) {
    seen.push_back(*interpreter);
    if (const auto real = fs::canonical(*interpreter, error); !error) {
      seen.push_back(real);
    }
  }
  for (const auto& path : seen) {
    const auto root = install_root(path);
    if (!root.empty() && root != root.root_path() && !is_system(root)) {
      add_unique(roots, root);
    }
  }
  return roots;
}

CcacheFolders parse_ccache_config(std::string_view text) {
  CcacheFolders folders;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    // "(/root/.config/ccache/ccache.conf) base_dir = /work"
    if (!line.starts_with("(")) {
      continue;
    }
    const auto close = line.find(") ");
    const auto equals = line.find(" = ", close == std::string::npos ? 0 : close);
    if (close == std::string::npos || equals == std::string::npos) {
      continue;
    }
    const auto origin = line.substr(1, close - 1);
    const auto key = trim(std::string_view(line).substr(close + 2, equals - close - 2));
    const auto value = trim(std::string_view(line).substr(equals + 3));
    if (origin.starts_with("/")) {
      add_unique(folders.config_files, fs::path(origin));
    }
    if ((key == "cache_dir" || key == "temporary_dir") && value.starts_with("/")) {
      add_unique(folders.writable, fs::path(value).lexically_normal());
    }
  }
  return folders;
}

std::string_view python_paths_script() {
  return "import json, os, sys\n"
         "paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}\n"
         "paths.update(p for p in sys.path if os.path.isabs(p))\n"
         "paths.update([os.path.realpath(p) for p in paths])\n"
         "print(json.dumps(sorted(paths)))\n";
}

std::vector<fs::path> parse_python_paths(std::string_view json_text) {
  std::vector<fs::path> paths;
  const auto json = nlohmann::json::parse(json_text, nullptr, false);
  if (!json.is_array()) {
    return paths;
  }
  for (const auto& item : json) {
    if (item.is_string()) {
      const fs::path path(item.get<std::string>());
      if (path.is_absolute() && path != path.root_path() && !is_system(path)) {
        add_unique(paths, path.lexically_normal());
      }
    }
  }
  return paths;
}

SandboxMounts shared_sandbox_mounts(CommandRunner& runner,
                                    const std::vector<fs::path>& extra_writable) {
  SandboxMounts mounts;
  std::vector<std::string> programs = {"cmake", "ninja", "ccache", "c++", "g++", "cc", "gcc",
                                       "clang++", "clang"};
  for (const char* variable : {"CC", "CXX", "CUDACXX", "CMAKE_TOOLCHAIN_FILE"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && *value != '\0') {
      std::istringstream words(value);
      std::string first;
      words >> first;
      programs.push_back(first);
    }
  }
  for (const auto& program : programs) {
    if (const auto found = runner.find_program(program)) {
      for (const auto& root : program_roots(*found)) {
        add_unique(mounts.read_only, root);
      }
    } else if (program.starts_with("/") && fs::exists(program)) {
      add_unique(mounts.read_only, fs::path(program).parent_path());  // a toolchain file
    }
  }
  if (runner.find_program("ccache")) {
    if (const auto config = runner.capture({{"ccache", "-p"}, {}})) {
      auto ccache = parse_ccache_config(*config);
      for (const auto& file : ccache.config_files) {
        add_unique(mounts.read_only, file);
      }
      for (const auto& dir : ccache.writable) {
        std::error_code error;
        fs::create_directories(dir, error);
        add_unique(mounts.writable, dir);
      }
    }
  }
  for (const auto& dir : extra_writable) {
    std::error_code error;
    fs::create_directories(dir, error);
    add_unique(mounts.writable, dir);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    const fs::path path = fs::path(home).lexically_normal();
    if (path != path.root_path() && !is_system(path)) {
      mounts.home = path;
    }
  }
  return mounts;
}

std::vector<fs::path> toolkit_roots(const fs::path& nvcc) {
  std::vector<fs::path> roots{nvcc.parent_path().parent_path()};
  std::error_code error;
  if (const auto real = fs::canonical(nvcc, error); !error) {
    add_unique(roots, real.parent_path().parent_path());
  }
  return roots;
}

std::vector<fs::path> declared_outside_folders(const config::BuildConfig& config,
                                              const fs::path& kernel_dir) {
  std::vector<fs::path> folders;
  std::error_code error;
  const auto real_kernel = fs::weakly_canonical(kernel_dir, error);
  const auto outside = [&](const fs::path& path) {
    const auto relative = path.lexically_relative(kernel_dir);
    const auto real = fs::weakly_canonical(path, error).lexically_relative(real_kernel);
    return relative.empty() || *relative.begin() == ".." || real.empty() ||
           *real.begin() == "..";
  };
  const auto add = [&](const std::string& entry, bool is_folder) {
    const auto path = (kernel_dir / entry).lexically_normal();
    if (!outside(path)) {
      return;
    }
    add_unique(folders, is_folder ? path : path.parent_path());
    if (const auto real = fs::weakly_canonical(path, error); !error) {
      add_unique(folders, is_folder ? real : real.parent_path());
    }
  };
  const auto add_all = [&](const std::optional<std::vector<std::string>>& entries,
                           bool is_folder) {
    for (const auto& entry : entries.value_or(std::vector<std::string>{})) {
      add(entry, is_folder);
    }
  };
  if (const auto* torch = std::get_if<config::Torch>(&config.framework)) {
    add_all(torch->src, false);
    add_all(torch->include, true);
  } else if (const auto* tvm_ffi = std::get_if<config::TvmFfi>(&config.framework)) {
    add_all(tvm_ffi->src, false);
    add_all(tvm_ffi->include, true);
  }
  for (const auto& kernel : config.kernels) {
    add_all(kernel.src, false);
    add_all(kernel.include, true);
  }
  return folders;
}

StepSandbox variant_sandbox(const StepSandbox& sandbox, const fs::path& kernel_dir,
                            const fs::path& work, const std::vector<fs::path>& read_only) {
  auto out = sandbox;
  out.mounts.read_only.push_back(kernel_dir);
  for (const auto& path : read_only) {
    add_unique(out.mounts.read_only, path);
  }
  out.mounts.writable.push_back(work);
  return out;
}

util::Expected<void> prepare_build_tree(const fs::path& build_tree, bool sandboxed) {
  std::error_code error;
  const auto stamp = build_tree / k_unsandboxed_stamp;
  if (sandboxed) {
    if (fs::exists(stamp, error)) {
      fs::remove_all(build_tree, error);
      if (error) {
        return util::fail(fmt::format("cannot remove \"{}\" (built without the sandbox): {}",
                                      build_tree.string(), error.message()));
      }
    }
    return {};
  }
  fs::create_directories(build_tree, error);
  return util::write_file_atomic(stamp, "built with --no-sandbox\n");
}

util::Expected<void> run_build_steps(const std::vector<Command>& commands,
                                     const std::string& variant,
                                     const std::optional<StepSandbox>& sandbox,
                                     CommandRunner& runner) {
  std::fprintf(stderr, "kernel-builder: building %s\n", variant.c_str());
  for (const auto& command : commands) {
    std::optional<std::string> explanation;
    auto step = command;
    if (sandbox) {
      step = sandboxed_command(command, sandbox->bwrap, sandbox->mounts);
      step.on_failure = [&explanation, &sandbox](std::string_view output) {
        explanation = explain_sandbox_failure(output, sandbox->mounts, [](const fs::path& path) {
          std::error_code error;
          return fs::exists(path, error);
        });
      };
    }
    const auto status = KH_TRY(runner.run(step));
    if (status != 0) {
      return util::fail(fmt::format(
          "`{}` failed with exit status {} while building {}{}", command.argv.front(), status,
          variant,
          explanation ? fmt::format(" in the build sandbox: {}", *explanation)
                      : std::string("; see its output above")));
    }
  }
  return {};
}

}  // namespace kernelhub::builder
