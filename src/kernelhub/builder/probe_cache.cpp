// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/probe_cache.hpp>

#include <cstdlib>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <openssl/evp.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// Prints the interpreter, then where each module named in argv lives (an empty line for one
// that is missing), without importing any of them.
constexpr std::string_view k_locate_modules =
    "import importlib.util, sys\n"
    "print(sys.executable)\n"
    "for name in sys.argv[1:]:\n"
    "    spec = importlib.util.find_spec(name)\n"
    "    print(spec.origin if spec and spec.origin else '')\n";

// Path, size (files) and mtime: a reinstall touches all three, or at least the mtime.
std::string file_identity(const fs::path& path) {
  std::error_code error;
  const auto mtime = fs::last_write_time(path, error).time_since_epoch().count();
  if (error) {
    return fmt::format("{} missing", path.string());
  }
  const auto size = fs::is_regular_file(path, error) ? fs::file_size(path, error) : 0;
  return fmt::format("{} {} {}", path.string(), size, mtime);
}

std::string sha256_hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += fmt::format("{:02x}", digest[i]);
  }
  return hex;
}

}  // namespace

std::optional<std::string> modules_fingerprint(const fs::path& python,
                                               const std::vector<std::string>& modules,
                                               CommandRunner& runner) {
  Command locate{{python.string(), "-c", std::string(k_locate_modules)}, {}};
  locate.argv.insert(locate.argv.end(), modules.begin(), modules.end());
  const auto located = runner.capture(locate);
  if (!located) {
    return std::nullopt;
  }
  std::vector<std::string> lines;
  std::istringstream stream(*located);
  for (std::string line; std::getline(stream, line);) {
    lines.push_back(std::move(line));
  }
  if (lines.size() != modules.size() + 1) {
    return std::nullopt;
  }
  auto fingerprint = fmt::format("python {}\nexecutable {}\n", python.string(),
                                 file_identity(lines.front()));
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const auto& origin = lines[i + 1];
    if (origin.empty()) {
      fingerprint += fmt::format("{} missing\n", modules[i]);
      continue;
    }
    // A package's folder and its version.py change with a reinstall, its __init__.py too.
    const auto dir = fs::path(origin).parent_path();
    fingerprint += fmt::format("{}\n{}\n{}\n{}\n", modules[i], file_identity(origin),
                               file_identity(dir / "version.py"), file_identity(dir));
  }
  return fingerprint;
}

std::optional<std::string> torch_fingerprint(const fs::path& python, CommandRunner& runner) {
  auto fingerprint = modules_fingerprint(python, {"torch"}, runner);
  if (!fingerprint || fingerprint->find("torch missing\n") != std::string::npos) {
    return std::nullopt;
  }
  return fingerprint;
}

std::optional<fs::path> probe_cache_dir() {
  if (const char* dir = std::getenv("KERNELHUB_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return fs::path(dir) / "probes";
  }
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir != nullptr && *dir != '\0') {
    return fs::path(dir) / "kernelhub" / "probes";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache" / "kernelhub" / "probes";
  }
  return std::nullopt;
}

std::optional<std::string> cached_probe(const fs::path& python, std::string_view script,
                                        CommandRunner& runner, const std::optional<fs::path>& dir,
                                        const std::optional<std::string>& given) {
  const auto run = [&] {
    return runner.capture({{python.string(), "-c", std::string(script)}, {}});
  };
  std::optional<std::string> fingerprint;
  if (dir && given) {
    if (given->find("\ntorch\n") != std::string::npos) {
      fingerprint = given;
    }
  } else if (dir) {
    fingerprint = torch_fingerprint(python, runner);
  }
  if (!fingerprint) {
    return run();
  }
  // The key covers the script too, so a changed probe never reads an old answer.
  const auto entry = *dir / (sha256_hex(*fingerprint + "\n" + std::string(script)) + ".json");
  if (auto cached = util::read_file(entry)) {
    return std::move(*cached);
  }
  auto output = run();
  if (output) {
    std::error_code error;
    fs::create_directories(*dir, error);
    (void)util::write_file_atomic(entry, *output);  // a cache that cannot be written is no cache
  }
  return output;
}

}  // namespace kernelhub::builder
