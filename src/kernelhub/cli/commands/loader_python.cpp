// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/loader_python.hpp>

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/variants/program_runner.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::cli::commands {

variants::SystemInfo detect_loader_system(const std::string& python) {
  auto options = variants::DetectOptions::from_environment();
  if (!python.empty()) {
    options.pythons = {python};
  }
  const variants::SubprocessRunner runner;
  const auto host = variants::detect_build_host(runner, options);
  if (host.python.empty()) {
    std::fputs(fmt::format("note: no Python answered (asked {}); variants are chosen as for a "
                           "machine without torch: pass --python or set KERNELHUB_PYTHON\n",
                           fmt::join(options.pythons, ", "))
                   .c_str(),
               stderr);
  } else if (!host.torch) {
    std::fputs(fmt::format("note: torch is not installed for {}; variants are chosen as for a "
                           "machine without torch: pass --python for another interpreter\n",
                           host.python)
                   .c_str(),
               stderr);
  }
  return host.system;
}

CLI::Option* add_loader_python_option(CLI::App& sub, std::string& python,
                                      std::string_view decides) {
  return sub.add_option("--python", python,
                        fmt::format("the interpreter whose torch decides {} (default: "
                                    "KERNELHUB_PYTHON, else the python3 beside this program, "
                                    "else PATH's)",
                                    decides));
}

std::string builder_python(const std::string& python) {
  if (python != "python3") {
    return python;
  }
  return variants::own_environment_python().value_or(python);
}

}  // namespace kernelhub::cli::commands
