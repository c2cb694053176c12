// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/server/http_message.hpp>

// The sign-in of browsers (`GET/POST /login`, `POST /logout`): a browser cannot send
// `Authorization: Bearer`, so a reader types a token once and gets a session cookie that
// lets GET and HEAD of pages (never the API, never a write) read what that token may read.
namespace kernelhub::server::web {

inline constexpr std::string_view k_session_cookie = "kernelhub_session";

// The form; with `failed`, saying only that the token was not accepted (429: after too many
// failures from the reader's address, when it was not even checked).
HttpResponse login_page(bool failed, int status = 200);

// The session id a request's Cookie header carries, if any.
std::optional<std::string> session_cookie(const HttpRequest& request);

// 303 to `/`, setting (or, with an empty id, clearing) the session cookie.
HttpResponse session_redirect(const std::string& session_id, std::chrono::seconds lifetime);

// The site bar's account part: a sign-in link, or "signed in" and a sign-out button. Pages
// carry `k_account_marker` in their site bar, which the router replaces with this, since only
// it knows whether the request came with a session.
inline constexpr std::string_view k_account_marker = "<!--kh-account-->";
std::string account_html(bool signed_in);
void fill_account(HttpResponse& response, bool signed_in);

}  // namespace kernelhub::server::web
