// SPDX-License-Identifier: Apache-2.0
// `kernelhub._kernelhub`: the loader's C++ core seen from Python. Everything that decides
// (variant choice, module names, old layouts, python-depends, LOCAL_KERNELS, the registry)
// lives in kh_loader; Python keeps only what must be Python: the import itself and the modules.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/filesystem.h>

#include <cstdlib>
#include <memory>

#include <kernelhub/config/python_dependencies.hpp>
#include <kernelhub/loader/kernel_module.hpp>
#include <kernelhub/loader/loaded_kernels.hpp>
#include <kernelhub/loader/local_kernels.hpp>
#include <kernelhub/loader/local_variant.hpp>
#include <kernelhub/loader/python_depends.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/variants/system_detect.hpp>

#include "binding_support.hpp"

namespace nb = nanobind;
namespace fs = std::filesystem;
using namespace kernelhub;
using kernelhub::python::device_from;
using kernelhub::python::registry;
using kernelhub::python::system_from_probe;
using kernelhub::python::trace_list;
using kernelhub::python::value_or_raise;

namespace {

// What Python needs of a resolved variant, without a metadata.json round trip: its depends
// already as lists, and the resolved module itself (`module`, opaque), which
// check_kernels_minver and registry_add take instead of resolving the folder again.
nb::dict module_dict(loader::KernelModule module) {
  nb::dict out;
  // Paths as str: a pathlib.Path made from C++ costs an import lookup and a Python-level
  // constructor call each (~10 us), and the callers make their own Path when they need one.
  out["variant_path"] = module.variant_path.string();
  out["module_name"] = module.module_name;
  out["entry_file"] = module.entry_file.string();
  out["python_name"] = module.python_name;
  nb::list python_depends;
  nb::list kernel_depends;
  if (module.metadata) {
    out["name"] = module.metadata->name.str();
    for (const auto& name : module.metadata->python_depends) {
      python_depends.append(name);
    }
    for (const auto& dependency : module.metadata->kernel_depends) {
      kernel_depends.append(nb::make_tuple(
          dependency.repo_id,
          dependency.version ? nb::cast(*dependency.version) : nb::none(),
          dependency.revision ? nb::cast(*dependency.revision) : nb::none()));
    }
  } else {
    out["name"] = nb::none();
  }
  out["has_metadata"] = module.metadata.has_value();
  out["python_depends"] = python_depends;
  out["kernel_depends"] = kernel_depends;
  out["warnings"] = module.warnings;
  out["dirty_build"] = module.dirty_build ? nb::cast(*module.dirty_build) : nb::none();
  out["module"] = nb::cast(std::move(module));
  return out;
}

}  // namespace

loader::LoadedKernelRegistry& kernelhub::python::registry() {
  static loader::LoadedKernelRegistry instance;
  return instance;
}

NB_MODULE(_kernelhub, m) {
  // A resolved variant (resolve_kernel_module's "module"), handed back to the calls that need it.
  nb::class_<loader::KernelModule>(m, "KernelModule");
  m.doc() = "kernelhub's C++ loader core";
  kernelhub::python::bind_hub(m);
  kernelhub::python::bind_lock(m);
  kernelhub::python::bind_verify(m);
  kernelhub::python::bind_data(m);
  kernelhub::python::bind_variants(m);

  m.def("parse_local_kernels", [](const std::string& text) {
    std::vector<std::pair<std::string, fs::path>> out;
    for (auto& entry : value_or_raise(loader::parse_local_kernels(text), PyExc_ValueError)) {
      out.emplace_back(std::move(entry.repo_id), std::move(entry.path));
    }
    return out;
  });

  m.def(
      "parse_metadata",
      [](const std::string& text, const std::string& file_name) {
        auto parsed = metadata::parse_metadata(text, file_name);
        if (!parsed) {
          python::raise(PyExc_ValueError, "Cannot parse metadata: " + parsed.error().message);
        }
        // kernels_data presents git URLs normalised (scp-style as ssh://); the JSON keeps them
        // as written.
        auto url = [](const std::optional<types::GitUrl>& value) -> nb::object {
          return value ? nb::cast(value->normalized()) : nb::none();
        };
        return nb::make_tuple(metadata::to_json(*parsed), url(parsed->upstream),
                              url(parsed->source));
      },
      nb::arg("text"), nb::arg("file_name") = "metadata.json",
      "Validates metadata.json text as kernels-data does: (the canonical JSON (commits as "
      "\"commit\", kernel-depends always present), normalised upstream, normalised source); "
      "ValueError naming every problem.");

  m.def("probe_script", []() { return std::string(variants::python_probe_script()); });

  m.def("system_backend", [](const nb::object& probe_json) {
    return std::string(system_from_probe(probe_json).backend.name());
  });

  m.def(
      "find_local_variant",
      [](const fs::path& path, const nb::object& probe_json, const nb::object& backend,
         const nb::object& cuda, const nb::object& rocm) {
        auto system = system_from_probe(probe_json);
        std::optional<std::string> requested;
        if (!backend.is_none()) {
          requested = nb::cast<std::string>(backend);
        }
        if (auto applied = variants::apply_backend(system, requested); !applied) {
          python::raise(PyExc_ValueError, applied.error().message);
        }
        const auto match = value_or_raise(
            loader::find_local_variant(path, system, device_from(cuda, rocm)),
            PyExc_FileNotFoundError);
        return nb::make_tuple(match.variant_path, trace_list(match.resolution),
                              variants::render_trace(match.resolution.trace));
      },
      nb::arg("path"), nb::arg("probe_json"), nb::arg("backend") = nb::none(),
      nb::arg("cuda_capability") = nb::none(), nb::arg("rocm_arch") = nb::none());

  m.def("resolve_kernel_module", [](const fs::path& variant_path) {
    return module_dict(
        value_or_raise(loader::resolve_kernel_module(variant_path), PyExc_FileNotFoundError));
  });

  m.def(
      "check_kernels_minver",
      [](const loader::KernelModule& module, const std::string& installed) {
        if (auto checked = loader::check_kernels_minver(module, installed); !checked) {
          python::raise(PyExc_RuntimeError, checked.error().message);
        }
      },
      nb::arg("module"), nb::arg("installed") = std::string(loader::k_compat_version),
      "RuntimeError when the variant's kernels-minver is newer than compat_version.");
  m.attr("compat_version") = std::string(loader::k_compat_version);

  m.def("required_imports", [](const std::string& python_name,
                               const std::vector<std::string>& depends,
                               const nb::object& probe_json) {
    const auto detected = system_from_probe(probe_json).backend.kind;
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const auto& import :
         value_or_raise(loader::required_imports(python_name, depends, detected,
                                                 config::PythonDependencies::builtin()),
                        PyExc_ValueError)) {
      out.emplace_back(import.package, import.import_name,
                       loader::missing_import_message(python_name, import));
    }
    return out;
  });

  // realpath(3) for the loader's finder: os.path.realpath is Python code that lstat()s each
  // component in turn (about 50-100 us for a cache path; this is about 14). None when the path
  // cannot be resolved (the caller falls back to os.path.realpath).
  m.def("real_path", [](const std::string& path) -> nb::object {
    const std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                             &std::free);
    return resolved ? nb::cast(std::string(resolved.get())) : nb::none();
  });

  m.def("registry_find", [](const fs::path& variant_path) -> nb::object {
    const auto found = registry().find(variant_path);
    return found ? nb::cast(found->module.variant_path) : nb::none();
  });

  m.def("registry_add", [](const loader::KernelModule& module,
                           const std::optional<std::string>& repo_id,
                           const std::optional<std::string>& revision) {
    loader::LoadedKernel kernel;
    kernel.module = module;
    if (repo_id) {
      kernel.repo_info = loader::RepoInfo{*repo_id, revision.value_or("")};
    }
    return registry().add(std::move(kernel)).module.variant_path;
  });

  m.def("registry_remove", [](const fs::path& variant_path) {
    return registry().remove(variant_path);
  });

  m.def("registry_list", []() {
    nb::list out;
    for (const auto& kernel : registry().list()) {
      nb::dict entry = module_dict(kernel.module);
      entry["metadata_json"] = kernel.module.metadata
                                   ? nb::cast(metadata::to_json(*kernel.module.metadata))
                                   : nb::none();
      if (kernel.repo_info) {
        entry["repo_info"] = nb::make_tuple(kernel.repo_info->repo_id, kernel.repo_info->revision);
      } else {
        entry["repo_info"] = nb::none();
      }
      out.append(entry);
    }
    return out;
  });
}
