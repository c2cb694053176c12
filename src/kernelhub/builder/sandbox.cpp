// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/sandbox.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include <fmt/format.h>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_no_sandbox_hint =
    "build without the sandbox with --no-sandbox (or KERNELHUB_NO_SANDBOX=1)";

// `path` is `root` or lies under it (both absolute and normalised).
bool is_under(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) {
      continue;  // a trailing "/" in root
    }
    if (p == path.end() || *p != *r) {
      return false;
    }
  }
  return true;
}

// `paths` without duplicates and without those nested in another, parents first.
std::vector<fs::path> outermost(const std::vector<fs::path>& paths) {
  std::vector<fs::path> sorted;
  for (const auto& path : paths) {
    if (path.is_absolute()) {
      sorted.push_back(path.lexically_normal());
    }
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<fs::path> out;
  for (const auto& path : sorted) {
    if (std::none_of(out.begin(), out.end(),
                     [&](const fs::path& kept) { return is_under(path, kept); })) {
      out.push_back(path);
    }
  }
  return out;
}

// The sandbox's fixed part: namespaces, the system read-only, fresh /dev, /proc and /tmp.
std::vector<std::string> base_arguments(const fs::path& bwrap) {
  std::vector<std::string> argv{bwrap.string(), "--unshare-all", "--die-with-parent"};
  for (const auto& path : sandbox_system_paths()) {
    argv.insert(argv.end(), {"--ro-bind-try", path.string(), path.string()});
  }
  argv.insert(argv.end(), {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs",
                           "/var/tmp", "--setenv", "TMPDIR", "/tmp"});
  return argv;
}

// Error lines of curl (CMake's file(DOWNLOAD), FetchContent, git), pip, Python and getaddrinfo
// when there is no network, or nothing listening on a sandbox's own loopback.
constexpr std::array<std::string_view, 11> k_network_errors = {
    "couldn't resolve host",        "could not resolve host",
    "couldn't connect to server",   "failed to connect to",
    "network is unreachable",       "temporary failure in name resolution",
    "name or service not known",    "failed to establish a new connection",
    "connection refused",           "could not resolve proxy",
    "no address associated with hostname"};

// Lowercase, each run of white space one space: CMake wraps its messages ("Couldn't connect\n
//   to server").
std::string normalised(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (!out.empty() && out.back() != ' ') {
        out.push_back(' ');
      }
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool ends_token(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '"' || c == '\'' ||
         c == '`' || c == ')' || c == '(' || c == '<' || c == '>' || c == ';' || c == ',';
}

// The URLs the output names, in order, each once.
std::vector<std::string> urls_in(std::string_view output) {
  std::vector<std::string> urls;
  for (const std::string_view scheme : {"https://", "http://", "ftp://", "git://", "ssh://"}) {
    for (auto at = output.find(scheme); at != std::string_view::npos;
         at = output.find(scheme, at + 1)) {
      auto end = at;
      while (end < output.size() && !ends_token(output[end])) {
        ++end;
      }
      std::string url(output.substr(at, end - at));
      while (!url.empty() && (url.back() == '.' || url.back() == ':')) {
        url.pop_back();
      }
      if (std::find(urls.begin(), urls.end(), url) == urls.end()) {
        urls.push_back(std::move(url));
      }
    }
  }
  return urls;
}

// The absolute paths the output names: tokens starting with "/" after a delimiter, cut at the
// next delimiter and at a trailing ":" (compilers' "path:line:" and "path: No such file").
std::vector<fs::path> paths_in(std::string_view output) {
  std::vector<fs::path> paths;
  std::set<std::string> seen;
  for (std::size_t at = output.find('/'); at != std::string_view::npos;
       at = output.find('/', at + 1)) {
    if (at > 0 && !ends_token(output[at - 1]) && output[at - 1] != '=' &&
        output[at - 1] != ':') {
      continue;
    }
    auto end = at;
    while (end < output.size() && !ends_token(output[end]) && output[end] != ':') {
      ++end;
    }
    std::string text(output.substr(at, end - at));
    while (!text.empty() && (text.back() == '.' || text.back() == '/')) {
      text.pop_back();
    }
    // "//host/..." is the rest of a URL, not a path.
    if (text.size() > 1 && text[1] != '/' && seen.insert(text).second) {
      paths.emplace_back(fs::path(text).lexically_normal());
    }
    at = end == at ? at : end - 1;
  }
  return paths;
}

std::string join_quoted(const std::vector<std::string>& items, std::size_t limit) {
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < limit; ++i) {
    text += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", items[i]);
  }
  if (items.size() > limit) {
    text += fmt::format(" and {} more", items.size() - limit);
  }
  return text;
}

}  // namespace

const std::vector<fs::path>& sandbox_system_paths() {
  static const std::vector<fs::path> paths = {"/usr",   "/etc",   "/bin",  "/sbin",
                                              "/lib",   "/lib32", "/lib64", "/libx32"};
  return paths;
}

Command sandboxed_command(const Command& command, const fs::path& bwrap,
                          const SandboxMounts& mounts) {
  auto argv = base_arguments(bwrap);
  if (!mounts.home.empty()) {
    argv.insert(argv.end(), {"--tmpfs", mounts.home.string(), "--setenv", "HOME",
                             mounts.home.string()});
  }
  for (const auto& path : outermost(mounts.read_only)) {
    // Under /usr and the like it is visible already, and bwrap cannot mount on a link there
    // (/usr/local/cuda -> cuda-13.0).
    const auto& system = sandbox_system_paths();
    if (std::none_of(system.begin(), system.end(),
                     [&path](const fs::path& root) { return is_under(path, root); })) {
      argv.insert(argv.end(), {"--ro-bind-try", path.string(), path.string()});
    }
  }
  for (const auto& path : outermost(mounts.writable)) {
    argv.insert(argv.end(), {"--bind", path.string(), path.string()});
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  Command wrapped = command;
  wrapped.argv = std::move(argv);
  return wrapped;
}

util::Expected<fs::path> find_sandbox(CommandRunner& runner) {
  const auto bwrap = runner.find_program("bwrap");
  if (!bwrap) {
    return util::fail(fmt::format(
        "the build sandbox needs bubblewrap (`bwrap`), which was not found in PATH; install it "
        "(Debian and Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`) "
        "or {}",
        k_no_sandbox_hint));
  }
  Command probe{base_arguments(*bwrap), {}};
  probe.argv.insert(probe.argv.end(), {"--", "true"});
  if (!runner.capture(probe)) {
    return util::fail(fmt::format(
        "bubblewrap (\"{}\") cannot create the build sandbox on this machine (see its error "
        "above: user namespaces may be disabled, as in some containers); {}",
        bwrap->string(), k_no_sandbox_hint));
  }
  return *bwrap;
}

bool visible_in_sandbox(const fs::path& path, const SandboxMounts& mounts) {
  const auto under_any = [&path](const std::vector<fs::path>& roots) {
    return std::any_of(roots.begin(), roots.end(),
                       [&path](const fs::path& root) { return is_under(path, root); });
  };
  static const std::vector<fs::path> k_fresh = {"/dev", "/proc"};
  return under_any(sandbox_system_paths()) || under_any(k_fresh) || under_any(mounts.read_only) ||
         under_any(mounts.writable);
}

std::optional<std::string> explain_sandbox_failure(
    std::string_view output, const SandboxMounts& mounts,
    const std::function<bool(const fs::path&)>& exists) {
  std::vector<std::string> reasons;
  const auto lower = normalised(output);
  const bool network = std::any_of(k_network_errors.begin(), k_network_errors.end(),
                                   [&lower](std::string_view error) {
                                     return lower.find(error) != std::string::npos;
                                   });
  if (network) {
    const auto urls = urls_in(output);
    reasons.push_back(
        urls.empty() ? std::string("the build tried to reach the network, which the sandbox "
                                   "forbids (it has no network)")
                     : fmt::format("the build tried to reach the network ({}), which the "
                                   "sandbox forbids (it has no network)",
                                   join_quoted(urls, 3)));
  }
  std::vector<std::string> hidden;
  for (const auto& path : paths_in(output)) {
    if (!visible_in_sandbox(path, mounts) && exists(path)) {
      hidden.push_back(path.string());
    }
  }
  if (!hidden.empty()) {
    reasons.push_back(fmt::format(
        "the build tried to read {}, outside its declared inputs (the kernel's folder, the "
        "toolchain and the Python environment), which the sandbox hides",
        join_quoted(hidden, 3)));
  }
  if (reasons.empty()) {
    return std::nullopt;
  }
  std::string text;
  for (const auto& reason : reasons) {
    text += (text.empty() ? "" : "; ") + reason;
  }
  return fmt::format("{}; make what it needs part of the kernel's folder, or {}", text,
                     k_no_sandbox_hint);
}

}  // namespace kernelhub::builder
