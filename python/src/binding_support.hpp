// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the binding files share: raising Python exceptions from Expected values and turning
// the probe and the device arch into the C++ types.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>

#include <nlohmann/json.hpp>

#include <kernelhub/loader/device_arch.hpp>
#include <kernelhub/loader/loaded_kernels.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/build_host.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::python {

namespace nb = nanobind;

// The process's loaded kernels (bindings.cpp): the variants imported so far, by path.
loader::LoadedKernelRegistry& registry();

[[noreturn]] inline void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

template <typename T>
T value_or_raise(util::Expected<T> result, PyObject* type) {
  if (!result) {
    raise(type, result.error().message);
  }
  return std::move(*result);
}

// The probe's dict (str, bool, int, float and None values, nested dicts and lists) as JSON.
inline nlohmann::json json_from_python(nb::handle value) {
  if (value.is_none()) {
    return nullptr;
  }
  if (nb::isinstance<nb::bool_>(value)) {  // before int: a bool is an int in Python
    return nb::cast<bool>(value);
  }
  if (nb::isinstance<nb::int_>(value)) {
    return nb::cast<long long>(value);
  }
  if (nb::isinstance<nb::float_>(value)) {
    return nb::cast<double>(value);
  }
  if (nb::isinstance<nb::str>(value)) {
    return nb::cast<std::string>(value);
  }
  if (nb::isinstance<nb::dict>(value)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto [key, item] : nb::borrow<nb::dict>(value)) {
      out[nb::cast<std::string>(key)] = json_from_python(item);
    }
    return out;
  }
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    nlohmann::json out = nlohmann::json::array();
    for (nb::handle item : value) {
      out.push_back(json_from_python(item));
    }
    return out;
  }
  raise(PyExc_TypeError, "the probe holds a value that is not JSON: " +
                             nb::cast<std::string>(nb::str(value.type())));
}

// The machine the probe describes. `probe` is its answer: the JSON text a child interpreter
// printed, or the dict the package's in-process probe made (no text to write and parse then:
// both cost about as much as the rest of a warm load's first call into the core).
inline variants::SystemInfo system_from_probe(const nb::handle& probe) {
  variants::BuildHost host;
  auto applied = nb::isinstance<nb::str>(probe)
                     ? variants::apply_python_probe(nb::cast<std::string>(probe), host)
                     : variants::apply_parsed_probe(json_from_python(probe), host);
  if (!applied) {
    raise(PyExc_RuntimeError, applied.error().message);
  }
  return host.system;
}

inline loader::DeviceArch device_from(const nb::object& cuda, const nb::object& rocm) {
  loader::DeviceArch device;
  if (!cuda.is_none()) {
    const auto pair = nb::cast<std::pair<int, int>>(cuda);
    device.cuda = loader::CudaCapability{pair.first, pair.second};
  }
  if (!rocm.is_none()) {
    device.rocm = nb::cast<std::string>(rocm);
  }
  return device;
}

// [(variant name, rejection reason or None)], best first.
inline nb::list trace_list(const variants::Resolution& resolution) {
  nb::list trace;
  for (const auto& decision : resolution.trace) {
    trace.append(nb::make_tuple(variants::to_string(decision.variant),
                                decision.rejection ? nb::cast(*decision.rejection) : nb::none()));
  }
  return trace;
}

void bind_hub(nb::module_& m);
void bind_lock(nb::module_& m);
void bind_verify(nb::module_& m);
void bind_data(nb::module_& m);
void bind_variants(nb::module_& m);

}  // namespace kernelhub::python
