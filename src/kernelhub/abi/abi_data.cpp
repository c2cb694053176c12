// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/abi_data.hpp>

#include <fmt/format.h>

namespace kernelhub::abi {

namespace {

util::Expected<std::string_view> file(std::span<const util::EmbeddedFile> files,
                                      std::string_view path) {
  const auto* found = util::find_embedded(files, path);
  if (found == nullptr) {
    return util::fail(fmt::format("ABI data file \"{}\" is missing", path));
  }
  return found->data;
}

template <typename T>
util::Expected<T> in_file(std::string_view path, util::Expected<T> parsed) {
  if (!parsed) {
    return util::fail(fmt::format("{}: {}", path, parsed.error().message));
  }
  return parsed;
}

}  // namespace

std::string_view library_stem(std::string_view soname) {
  return soname.substr(0, soname.find(".so"));
}

util::Expected<AbiData> AbiData::parse(std::span<const util::EmbeddedFile> files) {
  AbiData data;
  auto manylinux = KH_TRY(file(files, "manylinux-policy.json"));
  data.manylinux = KH_TRY(in_file("manylinux-policy.json", parse_manylinux_policies(manylinux)));
  auto kernel = KH_TRY(file(files, "kernel-policies.json"));
  data.kernel = KH_TRY(in_file("kernel-policies.json", parse_kernel_policies(kernel)));
  auto python = KH_TRY(file(files, "python-stable-abi.tsv"));
  data.python_stable_abi =
      KH_TRY(in_file("python-stable-abi.tsv", VersionTable::parse(python, 2)));
  auto shims = KH_TRY(file(files, "torch-shim-versions.tsv"));
  data.torch_shims = KH_TRY(in_file("torch-shim-versions.tsv", VersionTable::parse(shims, 1)));
  auto libraries = KH_TRY(file(files, "torch-libraries.txt"));
  while (!libraries.empty()) {
    auto end = libraries.find('\n');
    auto line = libraries.substr(0, end);
    libraries = end == std::string_view::npos ? std::string_view() : libraries.substr(end + 1);
    if (!line.empty() && line.front() != '#') {
      data.torch_library_stems.emplace(line);
    }
  }
  return data;
}

util::Expected<const AbiData*> embedded_abi_data() {
  // Parsed once; a failure is kept too, so every caller sees the same error.
  static const util::Expected<AbiData> data = AbiData::parse(abi_data_files());
  if (!data) {
    return util::fail(data.error().message);
  }
  return &*data;
}

}  // namespace kernelhub::abi
