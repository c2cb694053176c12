// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/framework_reader.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include <kernelhub/config/general_reader.hpp>
#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::config::detail {

namespace {

constexpr std::array<std::string_view, 3> k_framework_keys = {"torch", "torch-noarch", "tvm-ffi"};

std::optional<TorchStableAbi> read_stable_abi(TableReader& torch, const EditionSchema& schema) {
  const auto* node = torch.get("stable-abi");
  if (node == nullptr) {
    return std::nullopt;
  }
  auto& ctx = torch.context();
  const auto path = torch.path_of("stable-abi");
  if (node->is_string()) {
    if (auto version = read_version(ctx, *node, path)) {
      return TorchStableAbi{std::move(*version)};
    }
    return std::nullopt;
  }
  const auto* table = node->as_table();
  if (table == nullptr || !schema.stable_abi_table) {
    ctx.error(node->source(),
              fmt::format("expected {} for \"{}\", found {}",
                          schema.stable_abi_table ? "a version or a per-backend table"
                                                  : "a version string",
                          path, describe_value(*node)),
              table != nullptr ? needs_edition_hint(5) : "write stable-abi = \"2.11\"");
    return std::nullopt;
  }
  std::map<types::Backend, types::Version> versions;
  bool ok = true;
  for (const auto& [key, value] : *table) {
    const auto entry_path = fmt::format("{}.{}", path, key.str());
    ctx.remember(entry_path, key.source());
    const auto it =
        std::find(types::k_backend_names.begin(), types::k_backend_names.end(), key.str());
    if (it == types::k_backend_names.end()) {
      ctx.error(key.source(), fmt::format("unknown backend \"{}\" in [{}]", key.str(), path),
                choice_hint(key.str(), types::k_backend_names));
      ok = false;
      continue;
    }
    if (auto version = read_version(ctx, value, entry_path)) {
      versions[types::k_all_backends[static_cast<std::size_t>(
          it - types::k_backend_names.begin())]] = std::move(*version);
    } else {
      ok = false;
    }
  }
  if (!ok) {
    return std::nullopt;
  }
  return TorchStableAbi{std::move(versions)};
}

Torch read_torch(TableReader& torch, const EditionSchema& schema) {
  Torch result;
  result.include = torch.strings("include");
  result.minver = torch.version("minver");
  result.maxver = torch.version("maxver");
  result.pyext = torch.strings("pyext");
  result.src = torch.strings("src");
  if (schema.stable_abi) {
    result.stable_abi = read_stable_abi(torch, schema);
  }
  if (schema.cxx_flags) {
    result.cxx_flags = torch.strings("cxx-flags");
  }
  if (result.minver && result.maxver && *result.maxver < *result.minver) {
    torch.context().warning(
        torch.table().get("maxver")->source(),
        fmt::format("torch.maxver \"{}\" is older than torch.minver \"{}\"",
                    result.maxver->to_string(), result.minver->to_string()),
        "no Torch version satisfies both bounds, so nothing will be built");
  }
  return result;
}

// [torch-noarch] takes the reference's snake_case spelling of the arch lists (what its parser
// accepts) and the documented kebab-case one.
std::optional<std::vector<std::string>> read_either_spelling(TableReader& table,
                                                             std::string_view snake,
                                                             std::string_view kebab) {
  auto from_snake = table.strings(snake);
  auto from_kebab = table.strings(kebab);
  if (table.has(snake) && table.has(kebab)) {
    table.context().error(
        table.table().get(kebab)->source(),
        fmt::format("\"{}\" and \"{}\" are the same key in {}", kebab, snake,
                    table.display_name()),
        "keep one of them");
    return std::nullopt;
  }
  return from_snake ? from_snake : from_kebab;
}

TorchNoarch read_torch_noarch(TableReader& noarch) {
  TorchNoarch result;
  result.pyext = noarch.strings("pyext");
  result.cuda_capabilities =
      read_either_spelling(noarch, "cuda_capabilities", "cuda-capabilities");
  result.rocm_archs = read_either_spelling(noarch, "rocm_archs", "rocm-archs");
  return result;
}

TvmFfi read_tvm_ffi(TableReader& tvm, const EditionSchema& schema) {
  TvmFfi result;
  result.include = tvm.strings("include");
  result.pyext = tvm.strings("pyext");
  result.src = tvm.strings("src", Need::required).value_or(std::vector<std::string>{});
  if (schema.cxx_flags) {
    result.cxx_flags = tvm.strings("cxx-flags");
  }
  return result;
}

Framework read_one(TableReader& root, std::string_view key, const toml::table& table,
                   const EditionSchema& schema) {
  TableReader reader(root.context(), table, std::string(key));
  Framework framework;
  if (key == "torch") {
    framework = read_torch(reader, schema);
  } else if (key == "torch-noarch") {
    framework = read_torch_noarch(reader);
  } else {
    framework = read_tvm_ffi(reader, schema);
  }
  reader.finish();
  return framework;
}

}  // namespace

Framework read_framework(TableReader& root, const EditionSchema& schema) {
  auto& ctx = root.context();
  std::vector<std::pair<std::string_view, const toml::table*>> present;
  for (const auto key : k_framework_keys) {
    if (key == "torch-noarch" && !schema.torch_noarch) {
      continue;
    }
    if (const auto* table = root.subtable(key)) {
      present.emplace_back(key, table);
    }
  }
  std::sort(present.begin(), present.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.second->source().begin;
    const auto& pb = b.second->source().begin;
    return std::tie(pa.line, pa.column) < std::tie(pb.line, pb.column);
  });
  if (present.empty()) {
    // A misspelt framework table ([torhc]) is reported once, as an unknown table with a
    // suggestion, rather than also as a missing framework.
    const auto misspelt = [&] {
      for (const auto& [key, node] : root.table()) {
        if (util::closest_match(key.str(), k_framework_keys)) {
          return true;
        }
      }
      return false;
    };
    if (schema.framework_required && !misspelt()) {
      ctx.report(util::Severity::error, ctx.start_of_file(), "missing framework table",
                 "add one of [torch], [torch-noarch] or [tvm-ffi]");
    }
    return TorchNoarch{};
  }
  for (std::size_t i = 1; i < present.size(); ++i) {
    ctx.error(present[i].second->source(),
              fmt::format("only one framework table is allowed, found [{}] and [{}]",
                          present[0].first, present[i].first),
              "keep one of [torch], [torch-noarch] or [tvm-ffi]");
    read_one(root, present[i].first, *present[i].second, schema);
  }
  return read_one(root, present[0].first, *present[0].second, schema);
}

Torch read_legacy_torch(TableReader& torch, bool versions) {
  Torch result;
  result.include = torch.strings("include");
  result.pyext = torch.strings("pyext");
  result.src = torch.strings("src");
  if (versions) {
    result.minver = torch.version("minver");
    result.maxver = torch.version("maxver");
  }
  return result;
}

}  // namespace kernelhub::config::detail
