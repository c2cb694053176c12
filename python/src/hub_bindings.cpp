// SPDX-License-Identifier: Apache-2.0
// Hub loads for Python: install_hub_kernel, hub_kernel_variants ((trace, warnings)) and
// has_hub_kernel ((bool, warnings)) over
// kh_loader's hub_kernel. The environment (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, the caches)
// is read on every call, as the reference reads HF_HUB_OFFLINE at call time.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/filesystem.h>

#include <kernelhub/loader/hub_kernel.hpp>
#include <kernelhub/variants/system_detect.hpp>

#include "binding_support.hpp"

namespace kernelhub::python {

namespace {

struct HubCall {
  loader::HubLoadContext context;
  loader::HubKernelRequest request;
};

HubCall make_call(const std::string& repo_id, const std::optional<unsigned>& version,
                  const std::optional<std::string>& revision, const std::optional<std::string>& backend,
                  bool local_files_only, bool check_trust, const nb::object& probe_json,
                  const nb::object& cuda, const nb::object& rocm, const std::string& user_agent) {
  HubCall call{loader::HubLoadContext::from_environment(system_from_probe(probe_json),
                                                        device_from(cuda, rocm)),
               {}};
  // The caller's part of the User-Agent (built in Python as kernels builds it) follows ours.
  if (!user_agent.empty()) {
    call.context.endpoint.user_agent = hub::default_user_agent() + "; " + user_agent;
  }
  call.request.repo_id = repo_id;
  call.request.version = version;
  call.request.revision = revision;
  call.request.backend = backend;
  call.request.local_files_only = local_files_only;
  call.request.check_trust = check_trust;
  call.request.already_loaded = [](const std::filesystem::path& variant_path) {
    return registry().find(variant_path).has_value();
  };
  return call;
}

PyObject* exception_for(loader::LoadErrorKind kind) {
  switch (kind) {
    case loader::LoadErrorKind::not_found:
      return PyExc_FileNotFoundError;
    case loader::LoadErrorKind::import_error:
      return PyExc_ImportError;
    case loader::LoadErrorKind::io:
      return PyExc_OSError;
    case loader::LoadErrorKind::value:
      break;
  }
  return PyExc_ValueError;
}

template <typename T>
T load_or_raise(loader::LoadResult<T> result) {
  if (!result) {
    raise(exception_for(result.error().kind), result.error().message);
  }
  return std::move(*result);
}

// The Hub calls run without the GIL: downloads may take long and other threads keep going.
template <typename F>
auto without_gil(F&& work) {
  nb::gil_scoped_release release;
  return work();
}

nb::dict kernel_dict(const loader::HubKernel& kernel) {
  nb::dict out;
  out["variant_path"] = kernel.variant_path.string();  // str: see module_dict
  out["repo_id"] = kernel.repo_id;
  out["revision"] = kernel.revision;
  out["commit"] = kernel.commit;
  out["variant"] = kernel.variant;
  // Not the resolution's trace: no caller of a load reads it (hub_kernel_variants gives it),
  // and turning it into Python objects was a sixth of a first load's C++ time.
  out["warnings"] = kernel.warnings;
  return out;
}

// The three Hub calls take the same keyword arguments and differ only in the core function
// and in how its result becomes a Python value.
template <typename T, typename Convert>
void def_hub_call(nb::module_& m, const char* name,
                  loader::LoadResult<T> (*core)(const loader::HubLoadContext&,
                                                const loader::HubKernelRequest&),
                  Convert convert) {
  m.def(
      name,
      [core, convert](const std::string& repo_id, std::optional<unsigned> version,
                      std::optional<std::string> revision, std::optional<std::string> backend,
                      bool local_files_only, bool check_trust, const nb::object& probe_json,
                      const nb::object& cuda, const nb::object& rocm,
                      const std::string& user_agent) {
        auto call = make_call(repo_id, version, revision, backend, local_files_only, check_trust,
                              probe_json, cuda, rocm, user_agent);
        auto result = without_gil([&] { return core(call.context, call.request); });
        return convert(load_or_raise(std::move(result)));
      },
      nb::arg("repo_id"), nb::kw_only(), nb::arg("version") = nb::none(),
      nb::arg("revision") = nb::none(), nb::arg("backend") = nb::none(),
      nb::arg("local_files_only") = false, nb::arg("check_trust") = false, nb::arg("probe_json"),
      nb::arg("cuda_capability") = nb::none(), nb::arg("rocm_arch") = nb::none(),
      nb::arg("user_agent") = "");
}

}  // namespace

void bind_hub(nb::module_& m) {
  def_hub_call(m, "install_hub_kernel", &loader::install_hub_kernel, &kernel_dict);
  def_hub_call(m, "hub_kernel_variants", &loader::hub_kernel_variants,
               [](const loader::HubVariants& found) {
                 return nb::make_tuple(trace_list(found.resolution), found.warnings);
               });
  def_hub_call(m, "has_hub_kernel", &loader::has_hub_kernel,
               [](const loader::HubAvailability& found) {
                 return nb::make_tuple(found.available, found.warnings);
               });
  def_hub_call(m, "resolve_hub_revision", &loader::resolve_hub_revision,
               [](const loader::HubRevision& found) {
                 return nb::make_tuple(found.revision, found.warnings);
               });
}

}  // namespace kernelhub::python
