// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <kernelhub/abi/abi_data.hpp>
#include <kernelhub/abi/rules.hpp>

namespace kernelhub::abi {

void check_dependencies(const ElfFile& elf, const ResolvedPolicy& policy,
                        const StringSet& torch_library_stems, std::string_view library,
                        ViolationSink& sink) {
  const auto& whitelist = policy.manylinux->lib_whitelist;
  if (whitelist.empty()) {
    return;  // "linux" promises nothing about the system's libraries
  }
  for (const auto& needed : elf.needed) {
    bool loader = false;
    if (policy.always_allowed_prefixes != nullptr) {
      for (const auto& prefix : *policy.always_allowed_prefixes) {
        loader = loader || needed.starts_with(prefix);
      }
    }
    if (loader) {
      continue;
    }
    auto stem = library_stem(needed);
    if (stem == "libstdc++" && policy.dynamic_libstdcxx == DynamicLibstdcxx::forbidden) {
      sink.report(Violation{
          std::string(library), Rule::dependency, needed, {}, {},
          fmt::format("links libstdc++ dynamically (\"{}\"), which policy \"{}\" forbids", needed,
                      policy.name),
          "link C++ symbols statically (-static-libstdc++), as the older kernel requirements "
          "ask"});
      continue;
    }
    if (whitelist.contains(needed) || torch_library_stems.contains(stem)) {
      continue;
    }
    sink.report(Violation{
        std::string(library), Rule::dependency, needed, {}, {},
        fmt::format("needs library \"{}\", which is neither allowed by {} nor provided by torch",
                    needed, policy.manylinux->name),
        "link it statically, or load it through torch; a Hub kernel may depend only on torch, "
        "its CUDA/ROCm libraries and the manylinux system libraries"});
  }
}

}  // namespace kernelhub::abi
