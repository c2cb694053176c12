// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/abi/elf_reader.hpp>
#include <kernelhub/abi/macho_reader.hpp>
#include <kernelhub/abi/policy.hpp>
#include <kernelhub/abi/version_table.hpp>
#include <kernelhub/abi/violation.hpp>
#include <kernelhub/types/version.hpp>

// The ABI rules, one function each. Every function reports each violation it finds in one
// library (named `library` in the reports) and returns; none stops at the first.
namespace kernelhub::abi {

// A version for messages, with at least a minor part: "15.0" rather than Version's "15".
std::string version_text(const types::Version& version);

// Each versioned undefined symbol, and each version the library requires (verneed), whose
// prefix the policy constrains (GLIBC, GLIBCXX, CXXABI, GCC, LIBATOMIC, ZLIB) must carry a
// version the policy lists. Private or odd tokens ("GLIBC_PRIVATE") are violations unless
// listed ("CXXABI_TM_1"), never errors.
void check_manylinux(const ElfFile& elf, const ResolvedPolicy& policy, std::string_view library,
                     ViolationSink& sink);

// Each DT_NEEDED must be the dynamic loader, a library the policy whitelists or one torch or
// its CUDA/ROCm/XPU packages provide (matched by stem); a dynamic libstdc++ is a violation
// when the policy forbids it. The "linux" policy, with no whitelist, is not checked.
void check_dependencies(const ElfFile& elf, const ResolvedPolicy& policy,
                        const StringSet& torch_library_stems, std::string_view library,
                        ViolationSink& sink);

// Whether `library`'s file name tags it for one CPython (PEP 3149:
// `_name.cpython-311-x86_64-linux-gnu.so`): such an extension is built against that
// interpreter's full API, so the stable-ABI rule below is not applied to it (check-abi on
// kernelhub's own wheel, docs/wheels.md). `.abi3.so` and untagged libraries are checked.
bool is_single_cpython_extension(std::string_view library);

// Undefined Py*/_Py* symbols must be in CPython's stable ABI, added no later than `target`.
void check_python_abi(const std::vector<std::string>& undefined, const VersionTable& stable_abi,
                      const types::Version& target, std::string_view library,
                      ViolationSink& sink);

// Torch shim functions added after `target`, and any C++ symbol of c10::, at:: or torch::
// outside torch::stable::, break the torch stable ABI.
void check_torch_stable_abi(const std::vector<std::string>& undefined, const VersionTable& shims,
                            const types::Version& target, std::string_view library,
                            ViolationSink& sink);

// Each image must record a minimum macOS version no newer than `target`.
void check_macos(const MachOFile& file, const types::Version& target, std::string_view library,
                 ViolationSink& sink);

}  // namespace kernelhub::abi
