// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/cache_location.hpp>

#include <cctype>
#include <pwd.h>
#include <unistd.h>

namespace kernelhub::cache {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> non_empty(const EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (value && value->empty()) {
    return std::nullopt;
  }
  return value;
}

std::string home_of(std::string_view user, const EnvLookup& env) {
  if (user.empty()) {
    if (auto home = non_empty(env, "HOME")) {
      return *home;
    }
  }
  const struct passwd* entry =
      user.empty() ? ::getpwuid(::getuid()) : ::getpwnam(std::string(user).c_str());
  return entry != nullptr && entry->pw_dir != nullptr ? std::string(entry->pw_dir) : std::string();
}

std::string expand_user(std::string_view raw, const EnvLookup& env) {
  if (raw.empty() || raw.front() != '~') {
    return std::string(raw);
  }
  const auto slash = raw.find('/');
  const auto user = raw.substr(1, slash == std::string_view::npos ? raw.npos : slash - 1);
  const auto home = home_of(user, env);
  if (home.empty() && !user.empty()) {
    return std::string(raw);  // unknown user: Python leaves the path alone
  }
  const auto rest = slash == std::string_view::npos ? std::string_view() : raw.substr(slash);
  // Python strips a trailing "/" of the home so "~/x" never becomes "//x".
  std::string base = home;
  while (base.size() > 1 && base.back() == '/') {
    base.pop_back();
  }
  return base + std::string(rest);
}

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string expand_vars(std::string_view text, const EnvLookup& env) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t name_begin = i + 1;
    std::size_t name_end = name_begin;
    std::size_t next = name_begin;
    if (name_begin < text.size() && text[name_begin] == '{') {
      const auto close = text.find('}', name_begin + 1);
      if (close == std::string_view::npos) {
        out.push_back(text[i++]);
        continue;
      }
      name_begin += 1;
      name_end = close;
      next = close + 1;
    } else {
      while (name_end < text.size() && is_word(text[name_end])) {
        ++name_end;
      }
      next = name_end;
    }
    const std::string name(text.substr(name_begin, name_end - name_begin));
    const auto value = name.empty() ? std::nullopt : env(name);
    if (value) {
      out += *value;
    } else {
      out.append(text.substr(i, next - i));
    }
    i = next;
  }
  return out;
}

}  // namespace

std::string expand_path(std::string_view raw, const EnvLookup& env) {
  return expand_vars(expand_user(raw, env), env);
}

fs::path hf_home(const EnvLookup& env) {
  if (auto home = non_empty(env, "HF_HOME")) {
    return expand_path(*home, env);
  }
  if (auto xdg = non_empty(env, "XDG_CACHE_HOME")) {
    return expand_path((fs::path(*xdg) / "huggingface").string(), env);
  }
  return fs::path(expand_path("~", env)) / ".cache" / "huggingface";
}

fs::path hub_cache_dir(const EnvLookup& env) {
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    if (auto dir = non_empty(env, name)) {
      return expand_path(*dir, env);
    }
  }
  return hf_home(env) / "hub";
}

fs::path kernels_cache_dir(const EnvLookup& env) {
  if (auto dir = non_empty(env, "KERNELS_CACHE")) {
    return fs::path(*dir);
  }
  return hub_cache_dir(env);
}

}  // namespace kernelhub::cache
