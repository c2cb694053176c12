// SPDX-License-Identifier: Apache-2.0
// Variant names and the variant choice for any described machine (not only this one): the
// parser and the acceptance and preference rules of kh_variants, as the loader uses them.
// `kernelhub.get_kernel_variants` answers for this machine; these answer for a machine given
// field by field (the reference's `parse_variant` and `_resolve_variant_for_system`).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "binding_support.hpp"

#include <kernelhub/loader/device_arch.hpp>
#include <kernelhub/loader/kernel_status.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/release_version.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::python {

namespace {

std::optional<variants::ReleaseVersion> release(const nb::object& value) {
  if (value.is_none()) {
    return std::nullopt;
  }
  return value_or_raise(variants::ReleaseVersion::parse(nb::cast<std::string>(nb::str(value))),
                        PyExc_ValueError);
}

const char* framework_name(variants::Framework framework) {
  switch (framework) {
    case variants::Framework::torch:
      return "torch";
    case variants::Framework::torch_stable_abi:
      return "torch-stable-abi";
    case variants::Framework::tvm_ffi:
      return "tvm-ffi";
    case variants::Framework::torch_noarch:
      break;
  }
  return "torch-noarch";
}

const char* abi_name(variants::AbiTag tag) {
  switch (tag) {
    case variants::AbiTag::cxx11:
      return "cxx11";
    case variants::AbiTag::cxx98:
      return "cxx98";
    case variants::AbiTag::none:
      break;
  }
  return "";
}

}  // namespace

void bind_variants(nb::module_& m) {
  m.def(
      "parse_variant",
      [](const std::string& name) {
        const auto variant =
            value_or_raise(variants::parse_variant(name), PyExc_ValueError);
        nb::dict out;
        out["name"] = variants::to_string(variant);
        out["framework"] = framework_name(variant.framework);
        out["framework_version"] = variant.framework_version.to_string();
        out["abi"] = abi_name(variant.abi_tag);
        out["arch"] = variant.is_arch();
        out["backend"] = variant.is_arch()
                             ? std::string(types::to_string(variant.backend.kind))
                             : variant.noarch_backend;
        out["backend_version"] = variant.backend.version.to_string();
        out["cpu"] = variant.cpu;
        out["os"] = variant.os;
        return out;
      },
      nb::arg("name"),
      "A variant name's parts: {name (canonical), framework, framework_version, abi, arch, "
      "backend, backend_version, cpu, os}; ValueError for a name the loader does not accept.");

  m.def(
      "resolve_variants",
      [](const std::vector<std::string>& names, const std::string& backend,
         const nb::object& backend_version, const std::string& cpu, const std::string& os,
         const nb::object& torch_version, const nb::object& cxx11_abi,
         const nb::object& tvm_ffi_version, const nb::object& macos_version, bool free_threaded) {
        variants::SystemInfo system;
        system.backend.kind = value_or_raise(types::parse_backend(backend), PyExc_ValueError);
        if (auto version = release(backend_version)) {
          system.backend.version = *version;
        }
        system.cpu = cpu;
        system.os = os;
        system.torch_version = release(torch_version);
        system.cxx11_abi =
            cxx11_abi.is_none() ? std::nullopt : std::optional<bool>(nb::cast<bool>(cxx11_abi));
        system.tvm_ffi_version = release(tvm_ffi_version);
        system.macos_version = release(macos_version);
        system.free_threaded = free_threaded;
        const auto resolution = variants::resolve_variant_names(system, names);
        return nb::make_tuple(trace_list(resolution), variants::render_trace(resolution.trace),
                              resolution.warning ? nb::cast(*resolution.warning) : nb::none());
      },
      nb::arg("names"), nb::arg("backend"), nb::arg("backend_version") = nb::none(),
      nb::arg("cpu") = "x86_64", nb::arg("os") = "linux", nb::arg("torch_version") = nb::none(),
      nb::arg("cxx11_abi") = nb::none(), nb::arg("tvm_ffi_version") = nb::none(),
      nb::arg("macos_version") = nb::none(), nb::arg("free_threaded") = false,
      "The loader's decision for each name on the described machine, best first: "
      "([(name, rejection or None)], the trace as text, the free-threading warning or None).");

  m.def(
      "arch_mismatch",
      [](const std::string& backend, const std::optional<std::vector<std::string>>& archs,
         const nb::object& cuda, const nb::object& rocm) -> std::optional<std::string> {
        metadata::Metadata metadata;
        metadata.backend.type = value_or_raise(types::parse_backend(backend), PyExc_ValueError);
        metadata.backend.archs = archs;
        return loader::arch_mismatch(metadata, device_from(cuda, rocm));
      },
      nb::arg("backend"), nb::arg("archs"), nb::arg("cuda_capability") = nb::none(),
      nb::arg("rocm_arch") = nb::none(),
      "Why a build of `backend` for `archs` cannot run on the given GPU (a (major, minor) CUDA "
      "capability or a ROCm gfx arch), or None when it can or when that cannot be told.");

  m.def(
      "parse_kernel_status",
      [](const std::string& text) {
        auto redirect = loader::parse_kernel_status(text);
        if (!redirect) {
          raise(PyExc_ValueError, redirect.error().message);
        }
        return nb::make_tuple("redirect", redirect->destination, redirect->revision);
      },
      nb::arg("text"),
      "kernel-status.toml as the loader reads it: (kind, destination, revision); ValueError "
      "as the reference raises it.");
}

}  // namespace kernelhub::python
