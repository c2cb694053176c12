// SPDX-License-Identifier: Apache-2.0
// kernels.lock for the Python package: `load_kernel(repo, lockfile=...)` and
// `get_locked_kernel` need the locked commit of one kernel from a lock in either format
// (loader/kernel_lock.hpp), with the reference's error when the kernel is not locked.
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <kernelhub/loader/kernel_lock.hpp>

#include "binding_support.hpp"

namespace kernelhub::python {

namespace {

loader::KernelLockFile parse_lock(const std::string& text, const std::string& file_name) {
  util::DiagnosticCollector sink;
  auto lock = loader::read_kernel_lock(text, file_name, sink);
  if (!lock) {
    std::string message;
    for (const auto& diagnostic : sink.sorted()) {
      message += (message.empty() ? "" : "\n") + diagnostic.location.file + ": " + diagnostic.message;
    }
    raise(PyExc_ValueError, message);
  }
  return std::move(*lock);
}

}  // namespace

void bind_lock(nb::module_& m) {
  m.def(
      "locked_revision",
      [](const std::string& repo_id, const std::string& text, const std::string& file_name) {
        const auto lock = parse_lock(text, file_name);
        const auto* entry = lock.find(repo_id);
        if (entry == nullptr) {
          raise(PyExc_ValueError, "Kernel `" + repo_id +
                                      "` is not locked. Please lock it with `kernels lock <project>` "
                                      "and then reinstall the project.");
        }
        return entry->commit;
      },
      nb::arg("repo_id"), nb::arg("text"), nb::arg("file_name") = "kernels.lock",
      "The commit `repo_id` is locked to in the kernels.lock text (either format); ValueError "
      "for a malformed lock or a kernel it does not lock.");
  m.def(
      "read_kernel_lock",
      [](const std::string& text, const std::string& file_name) {
        const auto lock = parse_lock(text, file_name);
        nb::list out;
        for (const auto& entry : lock.entries) {
          nb::dict item;
          item["repo_id"] = entry.repo_id;
          item["version"] = entry.version ? nb::cast(*entry.version) : nb::none();
          item["revision"] = entry.revision ? nb::cast(*entry.revision) : nb::none();
          item["commit"] = entry.commit;
          nb::dict variants;
          for (const auto& [name, variant] : entry.variants) {
            variants[nb::cast(name)] = variant.hash;
          }
          item["variants"] = variants;
          out.append(item);
        }
        return out;
      },
      nb::arg("text"), nb::arg("file_name") = "kernels.lock",
      "Every entry of a kernels.lock text as dicts: repo_id, version, revision, commit, variants.");
}

}  // namespace kernelhub::python
