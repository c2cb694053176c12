// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/server_settings.hpp>

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <kernelhub/util/file_io.hpp>
#include <kernelhub/util/toml_depth.hpp>
#include <kernelhub/verify/trusted_key.hpp>

namespace kernelhub::server {

util::Expected<std::set<std::string>> read_token_file(const std::filesystem::path& path) {
  // No file (or a link to none, as a removed mounted secret leaves): nobody may write. A file
  // that is there and cannot be read is an error below.
  std::error_code ec;
  if (std::filesystem::status(path, ec).type() == std::filesystem::file_type::not_found) {
    return std::set<std::string>{};
  }
  const std::string text = KH_TRY(util::read_file(path));
  std::set<std::string> tokens;
  std::size_t start = 0;
  std::size_t number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') {
      continue;
    }
    const auto last = line.find_last_not_of(" \t\r");
    const std::string token = line.substr(first, last - first + 1);
    // A token travels in an Authorization header: a blank or a control character in one is a
    // damaged file (two tokens on a line, a binary file), never a token a client can send.
    const auto bad = std::find_if(token.begin(), token.end(), [](unsigned char c) {
      return c <= 0x20 || c >= 0x7f;
    });
    if (bad != token.end()) {
      return util::fail(fmt::format("{}:{}: a token is printable ASCII without blanks; this line "
                                    "has byte 0x{:02x} at column {}",
                                    path.string(), number, static_cast<unsigned char>(*bad),
                                    first + static_cast<std::size_t>(bad - token.begin()) + 1));
    }
    tokens.insert(token);
  }
  return tokens;
}

FileStamp file_stamp(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return {};
  }
  return FileStamp{true, static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 +
                             info.st_mtim.tv_nsec,
                   static_cast<std::uintmax_t>(info.st_size),
                   static_cast<std::uintmax_t>(info.st_ino)};
}

namespace {

// `[signing] trusted-keys`: each entry is inline PEM or a key file. A key that does not parse
// fails the whole read, so a typo never leaves the hub publishing fewer keys than meant (and
// on reload the previous settings stay in force).
util::Expected<std::vector<PublishedKey>> read_trusted_keys(const toml::table& parsed,
                                                             const std::filesystem::path& root,
                                                             const std::filesystem::path& path) {
  std::vector<PublishedKey> published;
  const toml::node* node = parsed.at_path("signing.trusted-keys").node();
  if (node == nullptr) {
    return published;
  }
  const toml::array* entries = node->as_array();
  const auto where = [&](const toml::node& at) {
    return fmt::format("{}:{}:{}", path.string(), at.source().begin.line, at.source().begin.column);
  };
  if (entries == nullptr) {
    return util::fail(fmt::format("{}: signing.trusted-keys must be a list of key files or PEM "
                                  "texts", where(*node)));
  }
  for (const toml::node& entry : *entries) {
    const auto text = entry.value<std::string>();
    if (!text) {
      return util::fail(fmt::format("{}: signing.trusted-keys entries must be strings", where(entry)));
    }
    const bool inline_pem = text->find("-----BEGIN") != std::string::npos;
    std::filesystem::path file = *text;
    if (!inline_pem && file.is_relative()) {
      file = root / file;
    }
    const std::string source = inline_pem ? "inline" : *text;
    auto keys = inline_pem ? verify::parse_trusted_keys(*text, "inline key")
                           : verify::load_trusted_keys(file);
    if (!keys) {
      return util::fail(fmt::format("{}: signing.trusted-keys: {}", where(entry), keys.error().message));
    }
    for (const verify::TrustedKey& key : *keys) {
      published.push_back({key.hint, verify::key_description(key.key.get()), key.pem, source});
    }
  }
  return published;
}

// `[storage]`: sizes are byte counts; `lfs-threshold = false` turns LFS off.
util::Expected<StorageSettings> read_storage(const toml::table& parsed,
                                             const std::filesystem::path& path) {
  StorageSettings storage;
  const toml::node* section = parsed.get("storage");
  if (section == nullptr) {
    return storage;
  }
  const auto where = [&](const toml::node& at) {
    return fmt::format("{}:{}:{}", path.string(), at.source().begin.line, at.source().begin.column);
  };
  const toml::table* table = section->as_table();
  if (table == nullptr) {
    return util::fail(fmt::format("{}: storage must be a table", where(*section)));
  }
  for (const auto& [key, node] : *table) {
    const std::string name(key.str());
    const auto size = node.value<std::int64_t>();
    if (name == "lfs-threshold" && node.is_boolean()) {
      if (*node.value<bool>()) {
        return util::fail(fmt::format("{}: storage.lfs-threshold is a size in bytes, or false to "
                                      "store every file in git",
                                      where(node)));
      }
      storage.lfs_threshold.reset();
      continue;
    }
    const bool known = name == "lfs-threshold" || name == "binary-lfs-threshold" ||
                       name == "multipart-chunk-size";
    if (!known) {
      return util::fail(fmt::format("{}: unknown key storage.{}; expected lfs-threshold, "
                                    "binary-lfs-threshold or multipart-chunk-size",
                                    where(node), name));
    }
    if (!node.is_integer() || !size || *size < (name == "multipart-chunk-size" ? 1 : 0)) {
      return util::fail(fmt::format("{}: storage.{} must be a {} number of bytes", where(node),
                                    name, name == "multipart-chunk-size" ? "positive" : "non-negative"));
    }
    const auto bytes = static_cast<std::uint64_t>(*size);
    if (name == "lfs-threshold") {
      storage.lfs_threshold = bytes;
    } else if (name == "binary-lfs-threshold") {
      storage.binary_lfs_threshold = bytes;
    } else {
      storage.multipart_chunk_size = bytes;
    }
  }
  return storage;
}

// `[http]`: branch-max-age, whole seconds from 0 to a day.
util::Expected<HttpCacheSettings> read_http(const toml::table& parsed,
                                            const std::filesystem::path& path) {
  HttpCacheSettings http;
  const toml::node* section = parsed.get("http");
  if (section == nullptr) {
    return http;
  }
  const auto where = [&](const toml::node& at) {
    return fmt::format("{}:{}:{}", path.string(), at.source().begin.line, at.source().begin.column);
  };
  const toml::table* table = section->as_table();
  if (table == nullptr) {
    return util::fail(fmt::format("{}: http must be a table", where(*section)));
  }
  constexpr std::int64_t k_day = 24 * 3600;
  for (const auto& [key, node] : *table) {
    const std::string name(key.str());
    if (name != "branch-max-age") {
      return util::fail(fmt::format("{}: unknown key http.{}; expected branch-max-age",
                                    where(node), name));
    }
    const auto seconds = node.value<std::int64_t>();
    if (!node.is_integer() || !seconds || *seconds < 0 || *seconds > k_day) {
      return util::fail(fmt::format("{}: http.branch-max-age must be a number of seconds from 0 "
                                    "to {}",
                                    where(node), k_day));
    }
    http.branch_max_age = std::chrono::seconds(*seconds);
  }
  return http;
}

// `[mirror]` (mirror_settings.hpp): the token file is read here, so a reload picks up a new one.
util::Expected<MirrorSettings> read_mirror(const toml::table& parsed,
                                           const std::filesystem::path& path,
                                           const std::filesystem::path& root) {
  MirrorSettings mirror;
  const toml::node* section = parsed.get("mirror");
  if (section == nullptr) {
    return mirror;
  }
  const auto where = [&](const toml::node& at) {
    return fmt::format("{}:{}:{}", path.string(), at.source().begin.line, at.source().begin.column);
  };
  const toml::table* table = section->as_table();
  if (table == nullptr) {
    return util::fail(fmt::format("{}: mirror must be a table", where(*section)));
  }
  for (const auto& [key, node] : *table) {
    const std::string name(key.str());
    if (name == "upstream" || name == "token-file") {
      const auto text = node.value<std::string>();
      if (!node.is_string() || text->empty()) {
        return util::fail(fmt::format("{}: mirror.{} must be a non-empty string", where(node),
                                      name));
      }
      if (name == "upstream") {
        auto url = normalize_upstream_url(*text);
        if (!url) {
          return util::fail(fmt::format("{}: {}", where(node), url.error().message));
        }
        mirror.upstream = std::move(*url);
      } else {
        mirror.token_file = std::filesystem::path(*text).is_absolute()
                                ? std::filesystem::path(*text)
                                : root / *text;
      }
    } else if (name == "refresh") {
      const auto seconds = node.value<std::int64_t>();
      if (!node.is_integer() || *seconds < 0) {
        return util::fail(fmt::format("{}: mirror.refresh must be a non-negative number of "
                                      "seconds",
                                      where(node)));
      }
      mirror.refresh = std::chrono::seconds(*seconds);
    } else {
      return util::fail(fmt::format("{}: unknown key mirror.{}; expected upstream, token-file "
                                    "or refresh",
                                    where(node), name));
    }
  }
  if (!mirror.token_file.empty()) {
    auto token = read_mirror_token(mirror.token_file);
    if (!token) {
      return util::fail(fmt::format("{}: {}", where(*section), token.error().message));
    }
    mirror.token = std::move(*token);
  }
  return mirror;
}

}  // namespace

util::Expected<ConfigFile> read_config_file(const std::filesystem::path& root) {
  ConfigFile config;
  auto& organizations = config.organizations;
  const auto path = root / "config.toml";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return config;
  }
  const std::string text = KH_TRY(util::read_file(path));
  // Before toml++: a key of thousands of dotted parts overflows its recursion (issue 12).
  if (auto shallow = util::check_toml_depth(text, path.string()); !shallow) {
    return tl::unexpected(shallow.error());
  }
  toml::table parsed;
  try {
    parsed = toml::parse(text, path.string());
  } catch (const toml::parse_error& error) {
    return util::fail(fmt::format("{}:{}:{}: {}", path.string(), error.source().begin.line,
                                  error.source().begin.column, error.description()));
  }
  config.trusted_keys = KH_TRY(read_trusted_keys(parsed, root, path));
  config.storage = KH_TRY(read_storage(parsed, path));
  config.http = KH_TRY(read_http(parsed, path));
  config.mirror = KH_TRY(read_mirror(parsed, path, root));
  const toml::table* table = parsed["organizations"].as_table();
  if (table == nullptr) {
    return config;
  }
  for (const auto& [name, node] : *table) {
    const toml::table* org = node.as_table();
    if (org == nullptr) {
      return util::fail(fmt::format("{}: organizations.{} must be a table", path.string(),
                                    std::string(name.str())));
    }
    OrganizationSettings settings;
    settings.trusted_kernel_publisher = (*org)["trustedKernelPublisher"].value_or(false);
    organizations.emplace(std::string(name.str()), settings);
  }
  return config;
}

util::Expected<ServerSettings> reread_settings(const ServerSettings& base) {
  ServerSettings settings = base;
  ConfigFile config = KH_TRY(read_config_file(base.root));
  settings.organizations = std::move(config.organizations);
  settings.trusted_keys = std::move(config.trusted_keys);
  settings.storage = config.storage;
  settings.http = config.http;
  settings.mirror = std::move(config.mirror);
  if (!settings.mirror_upstream_override.empty()) {
    settings.mirror.upstream = settings.mirror_upstream_override;
  }
  return settings;
}

}  // namespace kernelhub::server
