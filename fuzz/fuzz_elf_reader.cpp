// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the object-file readers (ELF, thin and universal Mach-O) and the ABI
// rules that consume what they read: any input must give a value or an error, never a crash,
// an out-of-bounds access (ASan) or undefined behaviour (UBSan). Commands: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <kernelhub/abi/abi_checker.hpp>
#include <kernelhub/abi/byte_source.hpp>
#include <kernelhub/abi/object_file.hpp>

namespace {

const kernelhub::abi::AbiChecker& checker() {
  // Every rule on, the torch one included, so hostile symbol names reach the demangler too.
  static const auto instance = [] {
    kernelhub::abi::CheckOptions options;
    options.torch_stable_abi = "2.10";
    return *kernelhub::abi::AbiChecker::create(**kernelhub::abi::embedded_abi_data(), options);
  }();
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kernelhub::abi::MemoryByteSource source(bytes);
  auto object = kernelhub::abi::read_object_file(source);
  if (!object) {
    return 0;
  }
  kernelhub::abi::ViolationCollector sink;
  checker().check(*object, "fuzz.so", sink);
  (void)sink.sorted();
  return 0;
}
