// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/tvm_ffi_environment.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/torch_environment.hpp>

namespace kernelhub::builder {

namespace {

std::string string_field(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The leading run of digits of `text` from `pos`, advancing `pos` past it.
std::string_view digits_at(std::string_view text, std::size_t& pos) {
  const auto start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    ++pos;
  }
  return text.substr(start, pos - start);
}

}  // namespace

std::string_view tvm_ffi_probe_script() {
  return R"(import json, platform
import tvm_ffi
print(json.dumps({
    "tvm_ffi": tvm_ffi.__version__,
    "machine": platform.machine(),
    "system": platform.system().lower(),
}))
)";
}

util::Expected<TvmFfiEnvironment> parse_tvm_ffi_probe(std::string_view json_text) {
  auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    // tvm_ffi may print to stdout while importing; the probe's JSON is then the last line.
    auto text = json_text;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
      text.remove_suffix(1);
    }
    if (const auto newline = text.rfind('\n'); newline != std::string_view::npos) {
      json = nlohmann::json::parse(text.substr(newline + 1), nullptr, /*allow_exceptions=*/false);
    }
  }
  if (!json.is_object()) {
    return util::fail("the tvm-ffi probe printed no JSON object");
  }
  const auto version = string_field(json, "tvm_ffi");
  if (version.empty()) {
    return util::fail("the tvm-ffi probe did not report tvm_ffi.__version__");
  }
  // "0.1.15.post2" -> 0.1: variant names and the loader's check use major.minor only.
  std::size_t pos = 0;
  const auto major = digits_at(version, pos);
  if (major.empty() || pos >= version.size() || version[pos] != '.') {
    return util::fail(fmt::format("cannot read tvm-ffi version \"{}\"", version));
  }
  ++pos;
  const auto minor = digits_at(version, pos);
  if (minor.empty()) {
    return util::fail(fmt::format("cannot read tvm-ffi version \"{}\"", version));
  }
  TvmFfiEnvironment env;
  env.version = variants::ReleaseVersion::from_parts(major, minor);
  env.cpu = normalise_cpu(string_field(json, "machine"));
  env.os = string_field(json, "system");
  if (env.cpu.empty() || env.os.empty()) {
    return util::fail("the tvm-ffi probe did not report the platform");
  }
  return env;
}

util::Expected<std::optional<TvmFfiEnvironment>> detect_tvm_ffi(
    const std::filesystem::path& python, CommandRunner& runner) {
  const auto output =
      runner.capture({{python.string(), "-c", std::string(tvm_ffi_probe_script())}, {}});
  if (!output) {
    return std::optional<TvmFfiEnvironment>();
  }
  return std::optional<TvmFfiEnvironment>(KH_TRY(parse_tvm_ffi_probe(*output)));
}

}  // namespace kernelhub::builder
