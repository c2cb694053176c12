// SPDX-License-Identifier: Apache-2.0
// Sigstore verification for Python (issue 14): the native verify_variant behind
// `kernelhub.verify`, and the loader's require_signature check that runs before an import.
// Nothing here needs the `sigstore` package or the network.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <kernelhub/loader/signature_requirement.hpp>
#include <kernelhub/loader/variant_verify.hpp>
#include <kernelhub/verify/signed_variant.hpp>

#include "binding_support.hpp"

namespace kernelhub::python {

namespace fs = std::filesystem;

void bind_verify(py::module_& m) {
  m.def(
      "verify_signed_variant",
      [](const fs::path& variant_path,
         const std::optional<std::vector<std::pair<std::string, std::vector<std::string>>>>&
             policies,
         const std::optional<fs::path>& trusted_root) {
        std::vector<verify::GitHubWorkflowPolicy> chosen;
        if (policies) {
          for (const auto& [repo_id, signers] : *policies) {
            chosen.push_back({repo_id, signers});
          }
        } else {
          chosen = verify::default_policies();
        }
        std::optional<verify::TrustedRoot> custom;
        if (trusted_root) {
          custom = value_or_raise(verify::load_trusted_root(*trusted_root), PyExc_ValueError);
        }
        verify::SignatureCheck check;
        {
          py::gil_scoped_release release;
          check = verify::verify_signed_variant(
              variant_path, chosen, custom ? *custom : verify::production_trusted_root());
        }
        py::list violations;
        for (const auto& violation : check.violations) {
          violations.append(py::make_tuple(std::string(loader::violation_kind_name(violation.kind)),
                                           violation.path, violation.expected, violation.got,
                                           violation.to_string()));
        }
        return py::make_tuple(std::string(verify::kind_name(check.status)), check.reason,
                              violations);
      },
      py::arg("variant_path"), py::arg("policies") = py::none(),
      py::arg("trusted_root") = py::none(),
      "kernels.verify.verify_variant natively: (kind, reason, [(violation kind, path, "
      "expected, got, text)]). policies: [(repo_id, [signer URIs])], None for kernels' "
      "DEFAULT_POLICIES (an empty list accepts nothing); trusted_root: a trusted_root.json "
      "path instead of the compiled-in production root.");

  m.def(
      "signature_required",
      [](const std::optional<bool>& requested) {
        return value_or_raise(loader::signature_required(requested), PyExc_ValueError);
      },
      py::arg("requested") = py::none(),
      "get_kernel's require_signature: the argument when given, else KERNELHUB_REQUIRE_SIGNATURE "
      "(ValueError for a value that is not a boolean).");

  m.def(
      "require_signed_variant",
      [](const fs::path& variant_path, const std::vector<fs::path>& trusted_keys) {
        util::Expected<void> verified;
        {
          py::gil_scoped_release release;
          loader::KeyOptions keys;
          keys.files = trusted_keys;
          keys.hub = loader::HubKeySource::from_environment();
          verified = loader::require_signed_variant(variant_path, keys);
        }
        if (!verified) {
          raise(PyExc_ImportError, verified.error().message);
        }
      },
      py::arg("variant_path"), py::arg("trusted_keys") = std::vector<fs::path>{},
      "Raises ImportError unless the variant is signed by a kernels-community build workflow, "
      "or with a trusted key (trusted_keys: PEM files; empty: KERNELHUB_TRUSTED_KEYS, else the "
      "hub's published keys), and matches its digest; call it before importing anything from "
      "the variant.");
}

}  // namespace kernelhub::python
