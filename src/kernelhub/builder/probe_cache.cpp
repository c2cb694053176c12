// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/probe_cache.hpp>

#include <cstdlib>
#include <system_error>

#include <fmt/format.h>
#include <openssl/evp.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// Prints where torch lives without importing it.
constexpr std::string_view k_locate_torch =
    "import importlib.util, sys\n"
    "spec = importlib.util.find_spec('torch')\n"
    "print(sys.executable)\n"
    "print(spec.origin if spec and spec.origin else '')\n";

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

std::optional<std::string> torch_fingerprint(const fs::path& python, CommandRunner& runner) {
  const auto located = runner.capture({{python.string(), "-c", std::string(k_locate_torch)}, {}});
  if (!located) {
    return std::nullopt;
  }
  const auto newline = located->find('\n');
  const auto executable = located->substr(0, newline);
  auto origin = newline == std::string::npos ? std::string() : located->substr(newline + 1);
  while (!origin.empty() && (origin.back() == '\n' || origin.back() == '\r')) {
    origin.pop_back();
  }
  if (origin.empty()) {
    return std::nullopt;
  }
  const auto torch_dir = fs::path(origin).parent_path();
  return fmt::format("python {}\nexecutable {}\n{}\n{}\n{}\n", python.string(),
                     file_identity(executable), file_identity(torch_dir / "__init__.py"),
                     file_identity(torch_dir / "version.py"), file_identity(torch_dir));
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
                                        CommandRunner& runner,
                                        const std::optional<fs::path>& dir) {
  const auto run = [&] {
    return runner.capture({{python.string(), "-c", std::string(script)}, {}});
  };
  const auto fingerprint = dir ? torch_fingerprint(python, runner) : std::nullopt;
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
