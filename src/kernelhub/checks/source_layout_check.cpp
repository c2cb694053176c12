// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/source_layout_check.hpp>

#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace kernelhub::checks {

namespace {

namespace fs = std::filesystem;

class LayoutChecker {
 public:
  LayoutChecker(const fs::path& kernel_dir, const config::LoadedBuildConfig& loaded,
                util::DiagnosticSink& sink)
      : m_kernel_dir(kernel_dir), m_loaded(loaded), m_sink(sink) {}

  void check_package() {
    const auto& config = m_loaded.config;
    const auto python_name = config.general.name.python_name();
    const auto package = python_extension_dir(config) + "/" + python_name;
    const auto package_dir = m_kernel_dir / package;
    std::error_code ec;
    if (!fs::is_regular_file(package_dir / "__init__.py", ec)) {
      m_sink.error({package, 0, 0},
                   fmt::format("the kernel's Python package \"{}\" must contain __init__.py",
                               package),
                   fs::is_directory(package_dir, ec)
                       ? "add an __init__.py that exports the kernel's functions"
                       : fmt::format("the package is named after general.name \"{}\"",
                                     config.general.name.str()));
    }
    if (fs::exists(package_dir / python_name, ec)) {
      m_sink.error({package + "/" + python_name, 0, 0},
                   fmt::format("\"{}/{}\" must not exist (the old nested layout)", package,
                               python_name),
                   fmt::format("move its files up into \"{}\"", package));
    }
    if (!fs::is_directory(package_dir, ec)) {
      return;
    }
    for (auto it = fs::recursive_directory_iterator(package_dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const auto relative = package + "/" + fs::relative(it->path(), package_dir).generic_string();
      const auto extension = it->path().extension();
      if (it->is_directory(ec) && it->path().filename() == "build") {
        m_sink.error({relative, 0, 0},
                     fmt::format("\"{}\" is a build folder inside the Python package", relative),
                     "build outputs go to the kernel's build/ folder; delete it");
        it.disable_recursion_pending();
      } else if (it->is_regular_file(ec) &&
                 (extension == ".so" || extension == ".pyd" || extension == ".dylib")) {
        m_sink.error({relative, 0, 0},
                     fmt::format("\"{}\" is a compiled library inside the Python package",
                                 relative),
                     "the build makes the kernel's native module; delete this file");
      }
    }
  }

  void check_sources(const std::string& table, const std::vector<std::string>& files) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      std::error_code ec;
      if (!fs::is_regular_file(m_kernel_dir / files[i], ec)) {
        report_missing(table + ".src", i,
                       fmt::format("source file \"{}\" listed in {}.src does not exist",
                                   files[i], table));
      }
    }
  }

  void check_includes(const std::string& table,
                      const std::optional<std::vector<std::string>>& folders) {
    if (!folders) {
      return;
    }
    for (std::size_t i = 0; i < folders->size(); ++i) {
      std::error_code ec;
      if (!fs::is_directory(m_kernel_dir / (*folders)[i], ec)) {
        report_missing(table + ".include", i,
                       fmt::format("include folder \"{}\" listed in {}.include does not exist",
                                   (*folders)[i], table));
      }
    }
  }

 private:
  // Reported at the array element when the reader recorded one, else at the key.
  void report_missing(const std::string& key, std::size_t index, std::string message) {
    const auto& locations = m_loaded.locations;
    auto it = locations.find(fmt::format("{}[{}]", key, index));
    if (it == locations.end()) {
      it = locations.find(key);
    }
    util::Diagnostic diagnostic;
    diagnostic.location = it != locations.end() ? it->second
                                                : util::SourceLocation{m_loaded.file_name, 0, 0};
    diagnostic.message = std::move(message);
    diagnostic.hint = "paths are relative to the kernel's folder";
    if (diagnostic.location.line > 0) {
      diagnostic.source_line = std::string(util::line_of(m_loaded.text, diagnostic.location.line));
    }
    m_sink.report(std::move(diagnostic));
  }

  const fs::path& m_kernel_dir;
  const config::LoadedBuildConfig& m_loaded;
  util::DiagnosticSink& m_sink;
};

}  // namespace

std::string python_extension_dir(const config::BuildConfig& config) {
  return std::holds_alternative<config::TvmFfi>(config.framework) ? "tvm-ffi-ext" : "torch-ext";
}

std::filesystem::path python_package_dir(const std::filesystem::path& kernel_dir,
                                         const config::BuildConfig& config) {
  return kernel_dir / python_extension_dir(config) / config.general.name.python_name();
}

void check_source_layout(const std::filesystem::path& kernel_dir,
                         const config::LoadedBuildConfig& loaded, util::DiagnosticSink& sink) {
  LayoutChecker checker(kernel_dir, loaded, sink);
  checker.check_package();
  const auto& config = loaded.config;
  if (const auto* torch = std::get_if<config::Torch>(&config.framework)) {
    checker.check_sources("torch", torch->src.value_or(std::vector<std::string>{}));
    checker.check_includes("torch", torch->include);
  } else if (const auto* tvm = std::get_if<config::TvmFfi>(&config.framework)) {
    checker.check_sources("tvm-ffi", tvm->src);
    checker.check_includes("tvm-ffi", tvm->include);
  }
  for (const auto& kernel : config.kernels) {
    const auto table = fmt::format("kernel.{}", kernel.name);
    checker.check_sources(table, kernel.src);
    checker.check_includes(table, kernel.include);
  }
}

}  // namespace kernelhub::checks
