// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/trusted_root.hpp>

// RFC 3161 signed timestamps (signatures.md §3.2a): a timestamp authority's statement that the
// bundle's signature existed at genTime. It is the only verified time of a Rekor v2 entry,
// which has no integrated time.
namespace kernelhub::verify {

// Whether `response` (a DER TimeStampResp) parses; the reference refuses the bundle otherwise.
bool is_timestamp_response(std::string_view response);

// The genTime of `response` if a trusted timestamp authority signed it over `signature`: status
// granted, the CMS signature by the authority's leaf with a chain to its root valid at genTime
// (an authority's chain may have expired since), the imprint the hash of `signature`, and
// genTime inside the authority's validFor with an exclusive end, as sigstore 4.5.1 judges it.
// nullopt when no authority accepts it: such a response is skipped, not an error.
std::optional<std::int64_t> verify_timestamp(std::string_view response,
                                             std::string_view signature,
                                             const TrustedRoot& root);

}  // namespace kernelhub::verify
