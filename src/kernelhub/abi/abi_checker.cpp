// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/abi_checker.hpp>

#include <fmt/format.h>

#include <kernelhub/abi/byte_source.hpp>
#include <kernelhub/abi/cxx_symbol.hpp>
#include <kernelhub/abi/library_discovery.hpp>
#include <kernelhub/abi/rules.hpp>

namespace kernelhub::abi {

namespace {

util::Expected<types::Version> parse_option(std::string_view option, std::string_view text) {
  auto version = types::Version::parse(text);
  if (!version) {
    return util::fail(fmt::format("{}: invalid version \"{}\"", option, text));
  }
  return version;
}

// Adds the C++ name to every violation whose symbol is mangled, whichever rule found it.
class DemanglingSink final : public ViolationSink {
 public:
  explicit DemanglingSink(ViolationSink& inner) : m_inner(inner) {}
  void report(Violation violation) override {
    if (violation.demangled.empty()) {
      violation.demangled = demangle(violation.symbol);
    }
    m_inner.report(std::move(violation));
  }

 private:
  ViolationSink& m_inner;
};

}  // namespace

util::Expected<AbiChecker> AbiChecker::create(const AbiData& data, const CheckOptions& options) {
  auto policy = resolve_policy(options.manylinux, data.manylinux, data.kernel);
  if (!policy) {
    return util::fail(fmt::format("--manylinux: {}", policy.error().message));
  }
  AbiChecker checker(data, *policy);
  checker.m_python_abi = KH_TRY(parse_option("--python-abi", options.python_abi));
  if (options.torch_stable_abi) {
    checker.m_torch_stable_abi =
        KH_TRY(parse_option("--torch-stable-abi", *options.torch_stable_abi));
  }
  checker.m_macos = KH_TRY(parse_option("--macos", options.macos));
  return checker;
}

void AbiChecker::check(const ObjectFile& object, std::string_view library,
                       ViolationSink& outer) const {
  DemanglingSink sink(outer);
  auto undefined = object.undefined_names();
  if (object.format == ObjectFormat::elf) {
    check_manylinux(object.elf, m_policy, library, sink);
    check_dependencies(object.elf, m_policy, m_data->torch_library_stems, library, sink);
  } else {
    check_macos(object.mach_o, m_macos, library, sink);
  }
  if (!is_single_cpython_extension(library)) {
    check_python_abi(undefined, m_data->python_stable_abi, m_python_abi, library, sink);
  }
  if (m_torch_stable_abi) {
    check_torch_stable_abi(undefined, m_data->torch_shims, *m_torch_stable_abi, library, sink);
  }
}

void AbiChecker::check_file(const std::filesystem::path& path, ViolationSink& sink) const {
  auto report = [&](const util::Error& error) {
    sink.report(Violation{path.string(), Rule::object_file, {}, {}, {},
                          fmt::format("cannot check the library: {}", error.message), {}});
  };
  auto source = FileByteSource::open(path);
  if (!source) {
    report(source.error());
    return;
  }
  auto object = read_object_file(*source);
  if (!object) {
    report(object.error());
    return;
  }
  check(*object, path.string(), sink);
}

util::Expected<CheckReport> check_paths(const AbiData& data, const CheckOptions& options,
                                        const std::vector<std::filesystem::path>& arguments) {
  auto checker = KH_TRY(AbiChecker::create(data, options));
  CheckReport report;
  report.libraries = KH_TRY(libraries_to_check(arguments));
  ViolationCollector collector;
  for (const auto& library : report.libraries) {
    checker.check_file(library, collector);
  }
  report.violations = collector.sorted();
  return report;
}

}  // namespace kernelhub::abi
