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
// The sign-in form's own token (issue 20 item 7: login CSRF), set by `GET /login` beside the
// same value in a hidden field. A page of another site can make a browser post the form,
// but can read neither, and a SameSite=Strict cookie is not sent with another site's post.
inline constexpr std::string_view k_login_cookie = "kernelhub_login";
inline constexpr std::string_view k_form_field = "form";

// The form, with a fresh form token in it and in the `kernelhub_login` cookie it sets; with
// `failed`, saying only that the token was not accepted (429: after too many failures from
// the reader's address, when it was not even checked; 403: the post did not come from this
// server's form).
HttpResponse login_page(bool failed, int status = 200);

// Whether a `POST /login` came from the form this server gave this browser: its form field
// equals its `kernelhub_login` cookie, and its Origin, when it sends one, is this server
// (scheme aside, so a TLS proxy in front changes nothing).
bool from_own_form(const HttpRequest& request, std::string_view form_token);

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
