// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/variant_name.hpp>

#include <span>
#include <vector>

#include <fmt/format.h>

namespace kernelhub::variants {

namespace {

constexpr std::string_view k_stable_abi_prefix = "torch-stable-abi";

std::vector<std::string_view> split_dashes(std::string_view name) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto dash = name.find('-', start);
    if (dash == std::string_view::npos) {
      parts.push_back(name.substr(start));
      return parts;
    }
    parts.push_back(name.substr(start, dash - start));
    start = dash + 1;
  }
}

std::string join_dashes(std::span<const std::string_view> parts) {
  return fmt::format("{}", fmt::join(parts, "-"));
}

// `<prefix>(\d)(\d+)`: a one-digit major and a minor of one or more digits ("torch210" is
// 2.10). tvm-ffi's lazy `(\d+?)(\d+)` splits the same way.
util::Expected<ReleaseVersion> parse_short_version(std::string_view text, std::string_view prefix,
                                                   std::string_view what) {
  const auto digits = text.substr(std::min(prefix.size(), text.size()));
  if (!text.starts_with(prefix) || digits.size() < 2 || !is_digits(digits)) {
    return util::fail(fmt::format("invalid {} \"{}\"", what, text));
  }
  return ReleaseVersion::from_parts(digits.substr(0, 1), digits.substr(1));
}

// The arch suffix: exactly <backend>-<cpu>-<os>.
// Completes `variant` with it.
util::Expected<Variant> parse_arch(std::span<const std::string_view> parts, std::string_view name,
                                   Variant variant) {
  if (parts.size() != 3) {
    return util::fail(fmt::format(
        "variant name \"{}\" must end in <backend>-<cpu>-<os>, found \"{}\"", name, join_dashes(parts)));
  }
  auto backend = parse_backend_token(parts[0]);
  if (!backend) {
    return util::fail(fmt::format("{} in variant name \"{}\"", backend.error().message, name));
  }
  variant.backend = std::move(*backend);
  variant.cpu = std::string(parts[1]);
  variant.os = std::string(parts[2]);
  return variant;
}

}  // namespace

util::Expected<Variant> parse_variant(std::string_view name) {
  const auto parts = split_dashes(name);
  const std::span<const std::string_view> all(parts);
  Variant variant;

  // Checked first: "torch-stable-abi211-..." would otherwise read as a noarch name.
  if (name.starts_with(k_stable_abi_prefix)) {
    variant.framework = Framework::torch_stable_abi;
    variant.framework_version = KH_TRY(parse_short_version(
        join_dashes(all.first(std::min<std::size_t>(3, all.size()))), k_stable_abi_prefix,
        "torch stable ABI version"));
    return parse_arch(all.subspan(std::min<std::size_t>(3, all.size())), name, std::move(variant));
  }
  if (parts[0] == "torch") {
    variant.noarch_backend = join_dashes(all.subspan(1));
    return variant;
  }
  if (parts[0].starts_with("torch")) {
    variant.framework = Framework::torch;
    variant.framework_version = KH_TRY(parse_short_version(parts[0], "torch", "torch version"));
    std::size_t arch_start = 1;
    if (parts.size() >= 2 && (parts[1] == "cxx11" || parts[1] == "cxx98")) {
      variant.abi_tag = parts[1] == "cxx11" ? AbiTag::cxx11 : AbiTag::cxx98;
      arch_start = 2;
    }
    return parse_arch(all.subspan(arch_start), name, std::move(variant));
  }
  if (parts[0] == "tvm" && parts.size() >= 2 && parts[1].starts_with("ffi")) {
    variant.framework = Framework::tvm_ffi;
    variant.framework_version = KH_TRY(parse_short_version(parts[1], "ffi", "tvm-ffi version"));
    return parse_arch(all.subspan(2), name, std::move(variant));
  }
  return util::fail(fmt::format("unknown framework in variant name \"{}\"", name));
}

std::string framework_string(const Variant& variant) {
  switch (variant.framework) {
    case Framework::torch_stable_abi:
      return fmt::format("{}{}", k_stable_abi_prefix, variant.framework_version.flattened());
    case Framework::tvm_ffi:
      return fmt::format("tvm-ffi{}", variant.framework_version.flattened());
    case Framework::torch_noarch:
      return "torch";
    case Framework::torch:
      break;
  }
  const auto base = fmt::format("torch{}", variant.framework_version.flattened());
  switch (variant.abi_tag) {
    case AbiTag::cxx11:
      return base + "-cxx11";
    case AbiTag::cxx98:
      return base + "-cxx98";
    case AbiTag::none:
      break;
  }
  return base;
}

std::string to_string(const Variant& variant) {
  if (!variant.is_arch()) {
    return fmt::format("torch-{}", variant.noarch_backend);
  }
  return fmt::format("{}-{}-{}-{}", framework_string(variant), to_string(variant.backend),
                     variant.cpu, variant.os);
}

}  // namespace kernelhub::variants
