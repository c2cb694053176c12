// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/login_page.hpp>

#include <fmt/format.h>

#include <kernelhub/server/session_store.hpp>
#include <kernelhub/server/web/page_layout.hpp>

namespace kernelhub::server::web {

namespace {

std::optional<std::string> cookie_value(const HttpRequest& request, std::string_view wanted) {
  for (const auto& [name, value] : request.headers) {
    if (name != "cookie") {
      continue;
    }
    std::string_view rest = value;
    while (!rest.empty()) {
      const auto end = rest.find(';');
      std::string_view pair = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
      while (!pair.empty() && pair.front() == ' ') {
        pair.remove_prefix(1);
      }
      const auto eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == wanted) {
        return std::string(pair.substr(eq + 1));
      }
    }
  }
  return std::nullopt;
}

// Compares every byte, so the time taken says nothing about how much of a guess was right.
bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  unsigned char differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return differ == 0;
}

}  // namespace

HttpResponse login_page(bool failed, int status) {
  // No detail on a failure: whether the token is unknown, revoked or the server read-only is
  // nothing a stranger needs to learn.
  std::string error;
  if (status == 429) {
    error = "<p class=\"error\" id=\"login-error\">Too many failed sign-ins from this "
            "address: try again in a minute.</p>\n";
  } else if (status == 403) {
    error = "<p class=\"error\" id=\"login-error\">That sign-in did not come from this "
            "server's form (or the form was too old): nothing was signed in. Sign in "
            "here.</p>\n";
  } else if (failed) {
    error = "<p class=\"error\" id=\"login-error\">That token was not accepted.</p>\n";
  }
  const std::string form_token = random_id();
  const std::string body = fmt::format(
      "<h1>Sign in</h1>\n{}"
      "<p class=\"muted\">A token from the server's token file lets this browser see private "
      "repositories. Pages only: uploads and the API still need the token in an "
      "Authorization header.</p>\n"
      "<form method=\"post\" action=\"/login\" id=\"login\">"
      "<input type=\"hidden\" name=\"{}\" value=\"{}\">"
      "<label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" "
      "required></label> <button type=\"submit\">Sign in</button></form>\n",
      error, k_form_field, form_token);
  HttpResponse response = html_response(page_html({"Sign in", {}, body}), status);
  response.set_header("Cache-Control", "no-store");
  // Sent back only to /login, only by this site's own pages; an hour to fill in the form.
  response.set_header("Set-Cookie", fmt::format("{}={}; Max-Age=3600; Path=/login; HttpOnly; "
                                                "SameSite=Strict",
                                                k_login_cookie, form_token));
  return response;
}

bool from_own_form(const HttpRequest& request, std::string_view form_token) {
  const auto cookie = cookie_value(request, k_login_cookie);
  if (!cookie || cookie->size() != 64 || !same_secret(*cookie, form_token)) {
    return false;
  }
  const auto origin = request.header("origin");
  if (!origin) {
    return true;  // older browsers send none with a same-origin post; the token decides
  }
  const auto host = request.header("host");
  const auto scheme_end = origin->find("://");
  return host && scheme_end != std::string::npos && origin->substr(scheme_end + 3) == *host;
}

std::optional<std::string> session_cookie(const HttpRequest& request) {
  return cookie_value(request, k_session_cookie);
}

HttpResponse session_redirect(const std::string& session_id, std::chrono::seconds lifetime) {
  HttpResponse response;
  response.status = 303;
  response.content_type = "text/plain; charset=utf-8";
  response.set_header("Location", "/");
  response.set_header("Cache-Control", "no-store");
  // HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it, so a link
  // or form elsewhere cannot act as the signed-in reader. The server speaks plain HTTP (a
  // TLS proxy in front adds nothing it can see), so `Secure` is left to that proxy.
  const long long max_age = session_id.empty() ? 0 : static_cast<long long>(lifetime.count());
  response.set_header("Set-Cookie", fmt::format("{}={}; Max-Age={}; Path=/; HttpOnly; "
                                                "SameSite=Strict",
                                                k_session_cookie, session_id, max_age));
  return response;
}

std::string account_html(bool signed_in) {
  if (!signed_in) {
    return "<a class=\"account\" href=\"/login\">Sign in</a>";
  }
  return "<span class=\"account muted\" id=\"signed-in\">signed in</span>"
         "<form method=\"post\" action=\"/logout\" class=\"signout\" id=\"sign-out-form\">"
         "<button type=\"submit\" id=\"sign-out\">Sign out</button></form>";
}

void fill_account(HttpResponse& response, bool signed_in) {
  if (!response.content_type.starts_with("text/html")) {
    return;
  }
  // The marker comes before <main>, so the first one is the site bar's; text from
  // repositories is escaped and cannot contain one.
  const auto at = response.body.find(k_account_marker);
  if (at != std::string::npos) {
    response.body.replace(at, k_account_marker.size(), account_html(signed_in));
  }
}

}  // namespace kernelhub::server::web
