// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/kernel_checks.hpp>

#include <algorithm>
#include <system_error>

#include <kernelhub/checks/native_op_registration_check.hpp>
#include <kernelhub/checks/op_registration_check.hpp>
#include <kernelhub/checks/python_imports_check.hpp>
#include <kernelhub/checks/source_layout_check.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::checks {

namespace {

namespace fs = std::filesystem;

std::string display_name(const fs::path& kernel_dir, const std::string& relative) {
  if (kernel_dir.empty() || kernel_dir == ".") {
    return relative;
  }
  return (kernel_dir / relative).lexically_normal().generic_string();
}

// Re-anchors diagnostics a check made with kernel-relative file names.
class DisplaySink final : public util::DiagnosticSink {
 public:
  DisplaySink(const fs::path& kernel_dir, std::string build_toml, util::DiagnosticSink& inner)
      : m_kernel_dir(kernel_dir), m_build_toml(std::move(build_toml)), m_inner(inner) {}
  void report(util::Diagnostic diagnostic) override {
    const auto& file = diagnostic.location.file;
    if (!file.empty() && file != m_build_toml && fs::path(file).is_relative()) {
      diagnostic.location.file = display_name(m_kernel_dir, diagnostic.location.file);
    }
    m_inner.report(std::move(diagnostic));
  }

 private:
  const fs::path& m_kernel_dir;
  std::string m_build_toml;  // already named as the reader was given it
  util::DiagnosticSink& m_inner;
};

}  // namespace

std::vector<std::string> kernel_python_files(const fs::path& kernel_dir,
                                             const config::BuildConfig& config) {
  std::vector<std::string> files;
  const auto package = python_package_dir(kernel_dir, config);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(package, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
    } else if (it->path().extension() == ".py" && it->is_regular_file(ec)) {
      files.push_back(fs::relative(it->path(), kernel_dir, ec).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> kernel_native_files(const fs::path& kernel_dir,
                                             const config::BuildConfig& config) {
  std::vector<std::string> files;
  auto add = [&](const std::vector<std::string>& listed) {
    for (const auto& file : listed) {
      std::error_code ec;
      if (is_native_source(file) && fs::is_regular_file(kernel_dir / file, ec)) {
        files.push_back(fs::path(file).lexically_normal().generic_string());
      }
    }
  };
  if (const auto* torch = std::get_if<config::Torch>(&config.framework)) {
    add(torch->src.value_or(std::vector<std::string>{}));
  } else if (const auto* tvm = std::get_if<config::TvmFfi>(&config.framework)) {
    add(tvm->src);
  }
  for (const auto& kernel : config.kernels) {
    add(kernel.src);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

void run_source_check(SourceCheck check, const fs::path& kernel_dir,
                      const config::LoadedBuildConfig& loaded, util::DiagnosticSink& sink) {
  DisplaySink display(kernel_dir, loaded.file_name, sink);
  if (check == SourceCheck::layout) {
    check_source_layout(kernel_dir, loaded, display);
    return;
  }
  const auto& config = loaded.config;
  const auto imports = check == SourceCheck::python_imports
                           ? kernel_imports(config, python_package_dir(kernel_dir, config))
                           : KernelImports{};
  for (const auto& file : kernel_python_files(kernel_dir, config)) {
    auto text = util::read_file(kernel_dir / file);
    if (!text) {
      display.error({file, 0, 0}, text.error().message);
      continue;
    }
    if (check == SourceCheck::op_registrations) {
      check_op_registrations(file, *text, display);
    } else {
      check_python_imports(file, *text, imports, ImportPolicy::builtin(), display);
    }
  }
  if (check == SourceCheck::op_registrations) {
    for (const auto& file : kernel_native_files(kernel_dir, config)) {
      auto text = util::read_file(kernel_dir / file);
      if (!text) {
        display.error({file, 0, 0}, text.error().message);
        continue;
      }
      check_native_op_registrations(file, *text, display);
    }
  }
}

}  // namespace kernelhub::checks
