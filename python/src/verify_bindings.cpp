// SPDX-License-Identifier: Apache-2.0
// Sigstore verification for Python (issue 14): the native verify_variant behind
// `kernelhub.verify`, and the loader's require_signature check that runs before an import.
// Nothing here needs the `sigstore` package or the network.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/filesystem.h>

#include <kernelhub/loader/signature_requirement.hpp>
#include <kernelhub/loader/variant_verify.hpp>
#include <kernelhub/verify/crypto.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/signed_variant.hpp>

#include "binding_support.hpp"

namespace kernelhub::python {

namespace fs = std::filesystem;

void bind_verify(nb::module_& m) {
  m.def(
      "verify_signed_variant",
      [](const fs::path& variant_path,
         const std::optional<std::vector<std::pair<std::string, std::vector<std::string>>>>&
             policies,
         const std::optional<fs::path>& trusted_root, const nb::object& identity_check) {
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
        const verify::TrustedRoot& root = custom ? *custom : verify::production_trusted_root();
        // The caller's policies, in Python: called with the leaf's DER at the policy step, it
        // answers None or the reason. Anything it raises (as a sigstore policy may) stops the
        // check and is raised again here, once the core has returned.
        std::optional<nb::python_error> raised;
        const verify::IdentityCheck python_identity = [&](X509* leaf) -> util::Expected<void> {
          const std::string der = verify::certificate_der(leaf);
          nb::gil_scoped_acquire gil;
          try {
            const nb::object problem = identity_check(nb::bytes(der.data(), der.size()));
            if (problem.is_none()) {
              return {};
            }
            return util::fail(nb::cast<std::string>(problem));
          } catch (nb::python_error& error) {
            raised.emplace(std::move(error));
            return util::fail("the identity policy raised an exception");
          }
        };
        verify::SignatureCheck check;
        {
          nb::gil_scoped_release release;
          check = identity_check.is_none()
                      ? verify::verify_signed_variant(variant_path, chosen, root)
                      : verify::verify_signed_variant(variant_path, python_identity, root);
        }
        if (raised) {
          throw std::move(*raised);
        }
        nb::list violations;
        for (const auto& violation : check.violations) {
          violations.append(nb::make_tuple(std::string(loader::violation_kind_name(violation.kind)),
                                           violation.path, violation.expected, violation.got,
                                           violation.to_string()));
        }
        return nb::make_tuple(std::string(verify::kind_name(check.status)), check.reason,
                              violations);
      },
      nb::arg("variant_path"), nb::arg("policies") = nb::none(),
      nb::arg("trusted_root") = nb::none(), nb::arg("identity_check") = nb::none(),
      "kernels.verify.verify_variant natively: (kind, reason, [(violation kind, path, "
      "expected, got, text)]). policies: [(repo_id, [signer URIs])], None for kernels' "
      "DEFAULT_POLICIES (an empty list accepts nothing); trusted_root: a trusted_root.json "
      "path instead of the compiled-in production root; identity_check: a callable used "
      "instead of policies, called with the signing certificate's DER at the policy step, "
      "returning None (accepted) or the reason it is not.");

  m.def(
      "check_workflow_policy",
      [](const nb::bytes& der, const std::string& repo_id,
         const std::vector<std::string>& signer_uris) -> std::optional<std::string> {
        const auto leaf = value_or_raise(verify::parse_certificate_der(std::string(der.c_str(), der.size())),
                                         PyExc_ValueError);
        const auto checked = verify::check_policy(leaf.get(), {repo_id, signer_uris});
        return checked ? std::nullopt : std::optional<std::string>(checked.error().message);
      },
      nb::arg("certificate_der"), nb::arg("repo_id"), nb::arg("signer_uris"),
      "GitHubWorkflowPolicy's check of one certificate (DER): None, or why it fails.");

  m.def(
      "signature_required",
      [](const std::optional<bool>& requested) {
        return value_or_raise(loader::signature_required(requested), PyExc_ValueError);
      },
      nb::arg("requested") = nb::none(),
      "get_kernel's require_signature: the argument when given, else KERNELHUB_REQUIRE_SIGNATURE "
      "(ValueError for a value that is not a boolean).");

  m.def(
      "require_signed_variant",
      [](const fs::path& variant_path, const std::vector<fs::path>& trusted_keys) {
        util::Expected<void> verified;
        {
          nb::gil_scoped_release release;
          loader::KeyOptions keys;
          keys.files = trusted_keys;
          keys.hub = loader::HubKeySource::from_environment();
          verified = loader::require_signed_variant(variant_path, keys);
        }
        if (!verified) {
          raise(PyExc_ImportError, verified.error().message);
        }
      },
      nb::arg("variant_path"), nb::arg("trusted_keys") = std::vector<fs::path>{},
      "Raises ImportError unless the variant is signed by a kernels-community build workflow, "
      "or with a trusted key (trusted_keys: PEM files; empty: KERNELHUB_TRUSTED_KEYS, else the "
      "hub's published keys), and matches its digest; call it before importing anything from "
      "the variant.");
}

}  // namespace kernelhub::python
