// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <kernelhub/variants/system.hpp>
#include <kernelhub/variants/variant_name.hpp>

// The loader's acceptance and preference rules (loader.md §2.3-2.4) as pure functions of a
// SystemInfo and a list of variants, with the reference's exact rejection reasons, so a trace
// we print matches the one `kernels` prints for the same machine.
namespace kernelhub::variants {

struct Decision {
  Variant variant;
  std::optional<std::string> rejection;  // nullopt: accepted

  bool accepted() const { return !rejection.has_value(); }

  friend bool operator==(const Decision&, const Decision&) = default;
};

struct Resolution {
  // One decision per considered variant, best first: accepted before rejected, then by the
  // preference order. The first entry, when accepted, is the variant to load.
  std::vector<Decision> trace;
  // Set on a free-threaded Python < 3.15, where the reference logs this warning and leaves
  // every arch variant out of the trace entirely.
  std::optional<std::string> warning;
  // Names that did not parse, in input order; the reference skips these without a decision.
  std::vector<std::string> skipped;

  const Variant* best() const;
};

inline constexpr std::string_view k_free_threaded_warning =
    "Arch kernels use the stable ABI, which is not supported on free-threaded Python before "
    "version 3.15. Arch kernels will not be used. Consider using a non-free-threaded "
    "interpreter, or upgrade to Python 3.15+.";

// The reference's `_check_variants`: one decision per variant, in input order (arch variants
// are left out on a free-threaded interpreter).
std::vector<Decision> check_variants(const SystemInfo& system, std::span<const Variant> variants);

// The reference's `_sort_variants`: a stable sort on (accepted, framework, ABI, backend
// version), so ties keep their input order.
std::vector<Decision> sort_decisions(std::vector<Decision> decisions);

// check_variants then sort_decisions (the reference's `_resolve_variant_for_system`). When
// the selected backend has no device (system.backend_device false), first with the cpu
// backend, and that resolution when it accepts a variant (a deliberate difference: the
// reference refuses a cpu-only kernel on a CUDA build of torch without a GPU).
Resolution resolve_variants(const SystemInfo& system, std::span<const Variant> variants);

// Parses `names` (skipping those that do not parse, as the reference does for a local
// directory listing) and resolves the rest.
Resolution resolve_variant_names(const SystemInfo& system, std::span<const std::string> names);

// The reference's `variants_trace_str`: one line per decision in the given order, the most
// preferred accepted variant (and any equal to it) marked "compatible, preferred ✅".
std::string render_trace(std::span<const Decision> decisions);

}  // namespace kernelhub::variants
