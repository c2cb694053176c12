// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/url.hpp>

#include <algorithm>
#include <array>

#include <kernelhub/types/url_host.hpp>
#include <kernelhub/util/ascii.hpp>

namespace kernelhub::types {

namespace {

using url_host::percent_encode;

// The percent-encode sets of the standard, on top of C0 controls and non-ASCII.
bool in_fragment_set(char c) { return c == ' ' || c == '"' || c == '<' || c == '>' || c == '`'; }
bool in_query_set(char c) { return c == ' ' || c == '"' || c == '#' || c == '<' || c == '>'; }
bool in_special_query_set(char c) { return in_query_set(c) || c == '\''; }
// The `url` crate predates the standard's addition of `^` to the path set, and the
// reference's output keeps `^`, so this does too.
bool in_path_set(char c) { return in_query_set(c) || c == '?' || c == '`' || c == '{' || c == '}'; }
bool in_userinfo_set(char c) {
  return in_path_set(c) || c == '/' || c == ':' || c == ';' || c == '=' || c == '@' ||
         (c >= '[' && c <= '^') || c == '|';
}

std::optional<std::uint16_t> default_port(std::string_view scheme) {
  if (scheme == "http" || scheme == "ws") {
    return 80;
  }
  if (scheme == "https" || scheme == "wss") {
    return 443;
  }
  if (scheme == "ftp") {
    return 21;
  }
  return std::nullopt;
}

// Strips leading and trailing C0 controls and spaces, drops every tab and newline.
std::string preprocess(std::string_view input) {
  const auto is_c0_or_space = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
  while (!input.empty() && is_c0_or_space(input.front())) {
    input.remove_prefix(1);
  }
  while (!input.empty() && is_c0_or_space(input.back())) {
    input.remove_suffix(1);
  }
  std::string out;
  std::copy_if(input.begin(), input.end(), std::back_inserter(out),
               [](char c) { return c != '\t' && c != '\n' && c != '\r'; });
  return out;
}

bool is_single_dot(std::string_view segment) {
  return segment == "." || segment == "%2e" || segment == "%2E";
}

bool is_double_dot(std::string_view segment) {
  static constexpr std::array<std::string_view, 7> k_forms = {
      "..", ".%2e", ".%2E", "%2e.", "%2E.", "%2e%2e", "%2E%2E"};
  return std::find(k_forms.begin(), k_forms.end(), segment) != k_forms.end() ||
         segment == "%2e%2E" || segment == "%2E%2e";
}

class Parser {
 public:
  explicit Parser(std::string input) : m_input(std::move(input)) {}

  std::optional<Url> run() {
    if (!parse_scheme()) {
      return std::nullopt;
    }
    const bool special = is_special_scheme(m_url.scheme);
    if (special) {
      // Any run of slashes and backslashes introduces the authority.
      while (m_pos < m_input.size() && (peek() == '/' || peek() == '\\')) {
        ++m_pos;
      }
      if (!parse_authority(true)) {
        return std::nullopt;
      }
      parse_path(true);
    } else if (rest().starts_with("//")) {
      m_pos += 2;
      if (!parse_authority(false)) {
        return std::nullopt;
      }
      parse_path(false);
    } else if (rest().starts_with("/")) {
      parse_path(false);
    } else {
      parse_opaque_path();
    }
    parse_query_and_fragment(special);
    return m_url;
  }

 private:
  char peek() const { return m_pos < m_input.size() ? m_input[m_pos] : '\0'; }
  bool at_end() const { return m_pos >= m_input.size(); }
  std::string_view rest() const { return std::string_view(m_input).substr(m_pos); }

  bool parse_scheme() {
    if (m_input.empty() || !util::is_ascii_alpha(m_input[0])) {
      return false;
    }
    std::size_t end = 0;
    while (end < m_input.size() &&
           (util::is_ascii_alpha(m_input[end]) || util::is_ascii_digit(m_input[end]) ||
            m_input[end] == '+' || m_input[end] == '-' || m_input[end] == '.')) {
      ++end;
    }
    if (end == m_input.size() || m_input[end] != ':') {
      return false;
    }
    for (std::size_t i = 0; i < end; ++i) {
      const char c = m_input[i];
      m_url.scheme += (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    }
    m_pos = end + 1;
    return true;
  }

  bool parse_authority(bool special) {
    const std::string_view terminators = special ? "/\\?#" : "/?#";
    const auto authority = rest().substr(0, rest().find_first_of(terminators));
    m_pos += authority.size();
    // The `url` crate's one exception to "userinfo needs a host": a lone '@' ending the input.
    if (!special && authority == "@" && at_end()) {
      m_url.host = "";
      return true;
    }
    auto host_port = authority;
    const auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
      const auto userinfo = authority.substr(0, at);
      const auto colon = userinfo.find(':');
      m_url.username = percent_encode(userinfo.substr(0, colon), in_userinfo_set);
      if (colon != std::string_view::npos) {
        m_url.password = percent_encode(userinfo.substr(colon + 1), in_userinfo_set);
      }
      host_port = authority.substr(at + 1);
      if (host_port.empty()) {
        return false;
      }
    }
    // The port starts at the first ':' outside brackets.
    std::size_t colon = std::string_view::npos;
    bool in_brackets = false;
    for (std::size_t i = 0; i < host_port.size(); ++i) {
      in_brackets = host_port[i] == '[' ? true : host_port[i] == ']' ? false : in_brackets;
      if (host_port[i] == ':' && !in_brackets) {
        colon = i;
        break;
      }
    }
    const auto host_text = host_port.substr(0, colon);
    if (host_text.empty() && (special || colon != std::string_view::npos)) {
      return false;
    }
    if (m_url.scheme == "file" && host_text.empty()) {
      m_url.host = "";
      return true;
    }
    m_url.host = host_text.empty() ? std::optional<std::string>("")
                                   : url_host::parse_host(host_text, special
                                                                         ? url_host::Kind::special
                                                                         : url_host::Kind::opaque);
    if (!m_url.host) {
      return false;
    }
    if (m_url.scheme == "file" && *m_url.host == "localhost") {
      m_url.host = "";
    }
    if (colon == std::string_view::npos) {
      return true;
    }
    auto port = host_port.substr(colon + 1);
    // The `url` crate ends a port at '\' for every scheme; in a non-special URL the rest is
    // then read as the path ("ssh://h:22\x" -> "ssh://h:22/\x").
    if (const auto backslash = port.find('\\'); !special && backslash != std::string_view::npos) {
      m_pos -= port.size() - backslash;
      port = port.substr(0, backslash);
    }
    return parse_port(port);
  }

  bool parse_port(std::string_view text) {
    if (!std::all_of(text.begin(), text.end(), util::is_ascii_digit)) {
      return false;
    }
    if (text.empty()) {
      return true;
    }
    std::uint32_t port = 0;
    for (const char c : text) {
      port = port * 10 + static_cast<std::uint32_t>(c - '0');
      if (port > 65535) {
        return false;
      }
    }
    if (m_url.scheme == "file") {
      return false;  // file URLs cannot have a port
    }
    if (default_port(m_url.scheme) != port) {
      m_url.port = static_cast<std::uint16_t>(port);
    }
    return true;
  }

  // Path segments up to '?' or '#', resolving "." and "..".
  void parse_path(bool special) {
    const auto is_slash = [&](char c) { return c == '/' || (special && c == '\\'); };
    if (special && !at_end() && is_slash(peek())) {
      ++m_pos;
    } else if (!special) {
      if (at_end() || peek() == '?' || peek() == '#') {
        return;
      }
      if (peek() == '/') {
        ++m_pos;
      }
    }
    std::string buffer;
    while (true) {
      const char c = peek();
      const bool end_of_segment = at_end() || is_slash(c) || c == '?' || c == '#';
      if (!end_of_segment) {
        buffer += percent_encode(std::string_view(&m_input[m_pos], 1), in_path_set);
        ++m_pos;
        continue;
      }
      const bool more = !at_end() && is_slash(c);
      if (is_double_dot(buffer)) {
        if (!m_url.path.empty()) {
          m_url.path.pop_back();
        }
        if (!more) {
          m_url.path.emplace_back();
        }
      } else if (is_single_dot(buffer)) {
        if (!more) {
          m_url.path.emplace_back();
        }
      } else {
        m_url.path.push_back(buffer);
      }
      buffer.clear();
      if (!more) {
        return;
      }
      ++m_pos;
    }
  }

  void parse_opaque_path() {
    const auto end = rest().find_first_of("?#");
    m_url.has_opaque_path = true;
    m_url.path.push_back(percent_encode(rest().substr(0, end), [](char) { return false; }));
    m_pos = end == std::string_view::npos ? m_input.size() : m_pos + end;
  }

  void parse_query_and_fragment(bool special) {
    if (peek() == '?' && !at_end()) {
      ++m_pos;
      const auto end = rest().find('#');
      const auto query = rest().substr(0, end);
      m_url.query = special ? percent_encode(query, in_special_query_set)
                            : percent_encode(query, in_query_set);
      m_pos = end == std::string_view::npos ? m_input.size() : m_pos + end;
    }
    if (peek() == '#' && !at_end()) {
      ++m_pos;
      m_url.fragment = percent_encode(rest(), in_fragment_set);
      m_pos = m_input.size();
    }
  }

  std::string m_input;
  std::size_t m_pos = 0;
  Url m_url;
};

}  // namespace

bool is_special_scheme(std::string_view scheme) {
  static constexpr std::array<std::string_view, 6> k_special = {"ftp", "file", "http",
                                                                "https", "ws", "wss"};
  return std::find(k_special.begin(), k_special.end(), scheme) != k_special.end();
}

std::optional<Url> parse_url(std::string_view input) {
  return Parser(preprocess(input)).run();
}

std::string Url::serialize() const {
  std::string out = scheme + ":";
  if (host) {
    out += "//";
    if (!username.empty() || !password.empty()) {
      out += username;
      if (!password.empty()) {
        out += ":" + password;
      }
      out += "@";
    }
    out += *host;
    if (port) {
      out += ":" + std::to_string(*port);
    }
  }
  if (has_opaque_path) {
    out += path.empty() ? "" : path.front();
  } else {
    // "/." keeps a path starting with an empty segment from reading as an authority.
    if (!host && path.size() > 1 && path.front().empty()) {
      out += "/.";
    }
    for (const auto& segment : path) {
      out += "/" + segment;
    }
  }
  if (query) {
    out += "?" + *query;
  }
  if (fragment) {
    out += "#" + *fragment;
  }
  return out;
}

}  // namespace kernelhub::types
