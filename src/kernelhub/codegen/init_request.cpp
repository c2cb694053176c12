// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/init_request.hpp>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include <kernelhub/types/kernel_name.hpp>

namespace kernelhub::codegen {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_name_form = "expected OWNER/REPO, for example \"my-org/my-kernel\"";

// Hub user and organisation names: letters, digits, '-', '_' and '.', not starting with a
// separator. Checked because the owner lands unescaped in build.toml and Python strings.
bool is_valid_owner(std::string_view owner) {
  if (owner.empty() || !std::isalnum(static_cast<unsigned char>(owner.front()))) {
    return false;
  }
  return std::all_of(owner.begin(), owner.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string camel_case(std::string_view words) {
  std::string result;
  bool start_of_word = true;
  for (const char c : words) {
    if (c == '-' || c == '_') {
      start_of_word = true;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    result += static_cast<char>(start_of_word ? std::toupper(byte) : std::tolower(byte));
    start_of_word = false;
  }
  return result;
}

std::string lowercase(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

fs::path absolute_in(const fs::path& path, const fs::path& cwd) {
  return (path.is_absolute() ? path : cwd / path).lexically_normal();
}

}  // namespace

util::Expected<KernelRepoName> KernelRepoName::parse(std::string_view owner_repo) {
  const auto slash = owner_repo.find('/');
  if (slash == std::string_view::npos) {
    return util::fail(fmt::format("invalid kernel repository \"{}\": {}", owner_repo, k_name_form));
  }
  const auto owner = owner_repo.substr(0, slash);
  const auto repo = owner_repo.substr(slash + 1);
  if (owner.empty() || repo.empty() || repo.find('/') != std::string_view::npos) {
    return util::fail(fmt::format("invalid kernel repository \"{}\": {}", owner_repo, k_name_form));
  }
  if (!is_valid_owner(owner)) {
    return util::fail(fmt::format(
        "invalid owner \"{}\" in \"{}\": Hub names use letters, digits, '-', '_' and '.'", owner,
        owner_repo));
  }
  KernelRepoName name;
  name.owner = std::string(owner);
  name.given_repo = std::string(repo);
  name.display_name = std::string(repo);
  std::replace(name.display_name.begin(), name.display_name.end(), '_', '-');
  // The reference scaffolds any repo name and lets the build fail on it; check it now.
  if (auto valid = types::KernelName::parse(name.display_name); !valid) {
    const auto suggestion = lowercase(name.display_name);
    auto message = valid.error().message;
    if (suggestion != name.display_name && types::KernelName::is_valid(suggestion)) {
      message += fmt::format("; did you mean \"{}/{}\"?", owner, suggestion);
    }
    return util::fail(std::move(message));
  }
  name.python_name = lowercase(repo);
  std::replace(name.python_name.begin(), name.python_name.end(), '-', '_');
  name.class_name = camel_case(repo);
  name.repo_id = fmt::format("{}/{}", owner, name.display_name);
  return name;
}

util::Expected<InitTarget> resolve_init_target(const std::optional<std::string>& path,
                                               const std::optional<std::string>& name,
                                               const fs::path& cwd) {
  if (name) {
    auto repo_name = KH_TRY(KernelRepoName::parse(*name));
    auto directory = path ? absolute_in(*path, cwd) : absolute_in(repo_name.display_name, cwd);
    return InitTarget{std::move(repo_name), std::move(directory)};
  }
  if (path) {
    auto repo_name = KernelRepoName::parse(*path);
    if (repo_name) {
      auto directory = absolute_in(repo_name->display_name, cwd);
      return InitTarget{std::move(*repo_name), std::move(directory)};
    }
    // A malformed owner/repo deserves its own message; a plain folder name needs an owner.
    if (std::count(path->begin(), path->end(), '/') == 1 && !path->starts_with('/') &&
        !path->ends_with('/') && !path->starts_with("./") && !path->starts_with("../")) {
      return tl::unexpected(repo_name.error());
    }
    return util::fail(fmt::format(
        "cannot tell the kernel's Hub owner from \"{}\": pass --name OWNER/REPO (looking the "
        "owner up on the Hub is not supported yet)",
        *path));
  }
  return util::fail(
      "no kernel name given: pass --name OWNER/REPO, or OWNER/REPO as the path (looking the "
      "owner up on the Hub is not supported yet)");
}

std::optional<std::string> take_trailing_path(std::vector<std::string>& backends) {
  if (backends.empty() || backends.back().find('/') == std::string::npos) {
    return std::nullopt;
  }
  auto path = std::move(backends.back());
  backends.pop_back();
  return path;
}

util::Expected<std::vector<types::Backend>> resolve_init_backends(
    std::span<const std::string> values) {
  std::vector<types::Backend> backends;
  auto add = [&backends](types::Backend backend) {
    if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
      backends.push_back(backend);
    }
  };
  for (const auto& value : values) {
    if (lowercase(value) == "all") {
      for (const auto backend : k_init_backends) {
        add(backend);
      }
      continue;
    }
    auto backend = types::parse_backend(value);
    if (!backend) {
      return util::fail(backend.error().message +
                        " (init knows all, cpu, cuda, metal, rocm and xpu)");
    }
    if (std::find(k_init_backends.begin(), k_init_backends.end(), *backend) ==
        k_init_backends.end()) {
      return util::fail(fmt::format(
          "backend \"{}\" has no init template: {} kernels are noarch-only ([torch-noarch]), "
          "while init creates a project with native kernels for cpu, cuda, metal, rocm or xpu",
          value, types::to_string(*backend)));
    }
    add(*backend);
  }
  if (backends.empty()) {
#ifdef __APPLE__
    backends.push_back(types::Backend::metal);
#else
    backends.push_back(types::Backend::cuda);
#endif
  }
  return backends;
}

}  // namespace kernelhub::codegen
