// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the binding files share: raising Python exceptions from Expected values and turning
// the probe and the device arch into the C++ types.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include <kernelhub/loader/device_arch.hpp>
#include <kernelhub/loader/loaded_kernels.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/build_host.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::python {

namespace py = pybind11;

// The process's loaded kernels (bindings.cpp): the variants imported so far, by path.
loader::LoadedKernelRegistry& registry();

[[noreturn]] inline void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

template <typename T>
T value_or_raise(util::Expected<T> result, PyObject* type) {
  if (!result) {
    raise(type, result.error().message);
  }
  return std::move(*result);
}

inline variants::SystemInfo system_from_probe(const std::string& probe_json) {
  variants::BuildHost host;
  auto applied = variants::apply_python_probe(probe_json, host);
  if (!applied) {
    raise(PyExc_RuntimeError, applied.error().message);
  }
  return host.system;
}

inline loader::DeviceArch device_from(const py::object& cuda, const py::object& rocm) {
  loader::DeviceArch device;
  if (!cuda.is_none()) {
    const auto pair = cuda.cast<std::pair<int, int>>();
    device.cuda = loader::CudaCapability{pair.first, pair.second};
  }
  if (!rocm.is_none()) {
    device.rocm = rocm.cast<std::string>();
  }
  return device;
}

// [(variant name, rejection reason or None)], best first.
inline py::list trace_list(const variants::Resolution& resolution) {
  py::list trace;
  for (const auto& decision : resolution.trace) {
    trace.append(py::make_tuple(variants::to_string(decision.variant),
                                decision.rejection ? py::cast(*decision.rejection) : py::none()));
  }
  return trace;
}

void bind_hub(py::module_& m);
void bind_lock(py::module_& m);
void bind_verify(py::module_& m);
void bind_data(py::module_& m);
void bind_variants(py::module_& m);

}  // namespace kernelhub::python
