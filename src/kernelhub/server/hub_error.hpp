// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace kernelhub::server {

// A failure the Hub protocol names: the HTTP status, the X-Error-Code the Python client maps
// to an exception class (empty when the Hub sends none) and a message for X-Error-Message.
struct HubError {
  int status = 500;
  std::string code;
  std::string message;
};

template <typename T>
using HubExpected = tl::expected<T, HubError>;

tl::unexpected<HubError> hub_fail(int status, std::string code, std::string message);

// The errors every endpoint shares, worded once.
tl::unexpected<HubError> bad_request(std::string message);
tl::unexpected<HubError> repo_not_found(const std::string& repo);
tl::unexpected<HubError> revision_not_found(const std::string& revision);
tl::unexpected<HubError> entry_not_found(const std::string& path);

namespace detail {
// The value KH_HUB_TRY yields: tl::expected<void> has no rvalue value().
template <typename T>
T take_value(HubExpected<T>&& result) {
  return std::move(*result);
}
inline void take_value(HubExpected<void>&& /*result*/) {}
}  // namespace detail

}  // namespace kernelhub::server

// KH_HUB_TRY(expr): KH_TRY for HubExpected, so a handler returns the first protocol error.
#define KH_HUB_TRY(expr)                                                 \
  __extension__({                                                        \
    auto kh_hub_try_result_ = (expr);                                    \
    if (!kh_hub_try_result_) {                                           \
      return tl::unexpected<::kernelhub::server::HubError>(              \
          std::move(kh_hub_try_result_).error());                        \
    }                                                                    \
    ::kernelhub::server::detail::take_value(std::move(kh_hub_try_result_)); \
  })
