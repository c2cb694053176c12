// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/build_config_reader.hpp>

#include <array>
#include <memory>
#include <limits>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <kernelhub/config/build_config_checks.hpp>
#include <kernelhub/config/edition_schema.hpp>
#include <kernelhub/config/framework_reader.hpp>
#include <kernelhub/config/general_reader.hpp>
#include <kernelhub/config/kernel_reader.hpp>
#include <kernelhub/config/legacy_reader.hpp>
#include <kernelhub/config/toml_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/util/toml_depth.hpp>

namespace kernelhub::config {

namespace {

using detail::ReadContext;
using detail::TableReader;

// Editions 3-5 share one shape (edition_schema.hpp).
BuildConfig read_modern(TableReader& root, const detail::EditionSchema& schema) {
  BuildConfig config;
  config.general = detail::read_general(root, schema);
  config.framework = detail::read_framework(root, schema);
  config.kernels = detail::read_kernels(root);
  root.finish();
  return config;
}

BuildConfig read_edition(TableReader& root, int edition) {
  switch (edition) {
    case 1:
      return detail::read_edition1(root);
    case 2:
      return detail::read_edition2(root);
    case 3:
      return read_modern(root, detail::k_edition3);
    case 4:
      return read_modern(root, detail::k_edition4);
    default:
      return read_modern(root, detail::k_edition5);
  }
}

// One complete read of the file as `edition`, its diagnostics kept aside.
struct Attempt {
  int edition = 5;
  std::optional<BuildConfig> config;
  SourceMap locations;
  util::DiagnosticCollector diagnostics;
  std::size_t errors = 0;
};

void attempt(const toml::table& root, std::string_view text, const std::string& file_name,
             Attempt& out) {
  ReadContext ctx(text, file_name, out.diagnostics, out.locations);
  TableReader reader(ctx, root, "");
  out.config = read_edition(reader, out.edition);
  out.errors = ctx.error_count();
}

// Without an edition key: the newest edition that fits, else the one with the fewest errors.
// Trying newest first resolves files that more than one edition accepts.
std::unique_ptr<Attempt> detect_legacy_edition(const toml::table& root, std::string_view text,
                                               const std::string& file_name) {
  std::unique_ptr<Attempt> best;
  for (const int edition : {4, 3, 2, 1}) {
    auto current = std::make_unique<Attempt>();
    current->edition = edition;
    attempt(root, text, file_name, *current);
    if (!best || current->errors < best->errors) {
      best = std::move(current);
    }
    if (best->errors == 0) {
      break;
    }
  }
  return best;
}

// The `general.edition` value, when the file has one. Reports a malformed or unsupported edition
// (and returns -1 for an unsupported one: the rest of the file cannot be interpreted).
std::optional<int> probe_edition(const toml::table& root, ReadContext& ctx) {
  const auto* general = root.get_as<toml::table>("general");
  const auto* node = general != nullptr ? general->get("edition") : nullptr;
  if (node == nullptr) {
    return std::nullopt;
  }
  const auto* integer = node->as_integer();
  if (integer == nullptr || integer->get() < 0 ||
      integer->get() > std::numeric_limits<std::uint32_t>::max()) {
    // Probably meant as edition 5: read the rest as edition 5 to report everything else.
    ctx.error(node->source(),
              fmt::format("expected a non-negative integer for \"general.edition\", found {}",
                          detail::describe_value(*node)),
              fmt::format("write edition = {}", k_current_edition));
    return k_current_edition;
  }
  if (integer->get() != k_current_edition) {
    ctx.error(node->source(), fmt::format("unsupported build.toml edition {}", integer->get()),
              fmt::format("this kernel-builder reads edition {} (and the legacy formats, which "
                          "have no `edition` key); a newer edition needs a newer kernel-builder",
                          k_current_edition));
    return -1;
  }
  return k_current_edition;
}

}  // namespace

BuildConfigInspection inspect_build_config(std::string_view text, std::string file_name,
                                           util::DiagnosticSink& sink) {
  BuildConfigInspection result;
  LoadedBuildConfig loaded;
  loaded.config.general.name = detail::placeholder_name();
  loaded.config.framework = TorchNoarch{};
  loaded.file_name = file_name;
  loaded.text = std::string(text);
  // Before toml++: a key of thousands of dotted parts overflows its recursion (issue 12).
  if (const auto deep = util::find_over_deep_toml(text)) {
    // The offending line may be 100 KB of `k.k.k`: quote its start only.
    constexpr std::size_t k_quoted_columns = 120;
    const auto line = static_cast<std::uint32_t>(deep->line);
    auto source_line = std::string(util::line_of(text, line));
    if (source_line.size() > k_quoted_columns) {
      source_line = source_line.substr(0, k_quoted_columns) + " ...";
    }
    sink.report(util::Diagnostic{
        util::Severity::error,
        util::SourceLocation{file_name, line, static_cast<std::uint32_t>(deep->column)},
        fmt::format("invalid TOML: {}", deep->message), {}, std::move(source_line)});
    return result;
  }
  toml::table root;
  try {
    root = toml::parse(text, file_name);
  } catch (const toml::parse_error& error) {
    SourceMap unused;
    ReadContext ctx(text, file_name, sink, unused);
    ctx.error(error.source(), fmt::format("invalid TOML: {}", error.description()));
    return result;
  }

  ReadContext ctx(text, file_name, sink, loaded.locations);
  std::size_t errors = 0;  // those of a legacy attempt, reported through `sink` directly
  const auto edition = probe_edition(root, ctx);
  if (edition == -1) {
    return result;
  }
  if (edition) {
    TableReader reader(ctx, root, "");
    loaded.config = read_edition(reader, *edition);
    loaded.source_edition = *edition;
  } else {
    auto best = detect_legacy_edition(root, text, file_name);
    for (const auto& diagnostic : best->diagnostics.all()) {
      sink.report(diagnostic);
    }
    loaded.config = std::move(*best->config);
    loaded.locations = std::move(best->locations);
    loaded.source_edition = best->edition;
    errors = best->errors;
    if (best->errors == 0) {
      ctx.report(util::Severity::warning, ctx.where("general"),
                 fmt::format("build.toml uses the legacy edition {} format (no `edition` key); "
                             "it is upgraded to edition {} in memory",
                             best->edition, k_current_edition),
                 "run `kernel-builder update-build` to persist the upgrade");
    } else {
      // Nothing fits: say which edition the errors are measured against.
      ctx.report(util::Severity::warning, ctx.where("general"),
                 fmt::format("build.toml has no `edition` key and matches no legacy format; it "
                             "was checked as edition {}, the closest",
                             best->edition),
                 fmt::format("a file in the current format has `edition = {}` in [general]",
                             k_current_edition));
    }
  }
  if (errors + ctx.error_count() == 0) {
    // Cross-section checks assume each section read cleanly.
    detail::check_build_config(ctx, loaded.config, loaded.source_edition);
  }
  result.edition = loaded.source_edition;
  if (errors + ctx.error_count() == 0) {
    result.loaded = std::move(loaded);
  }
  return result;
}

std::optional<LoadedBuildConfig> read_build_config(std::string_view text, std::string file_name,
                                                   util::DiagnosticSink& sink) {
  return inspect_build_config(text, std::move(file_name), sink).loaded;
}

util::Expected<LoadedBuildConfig> load_build_config(const std::filesystem::path& kernel_dir,
                                                    util::DiagnosticSink& sink) {
  std::error_code ec;
  if (!std::filesystem::is_directory(kernel_dir, ec)) {
    return util::fail(fmt::format("\"{}\" is not a directory", kernel_dir.string()));
  }
  const auto path = (kernel_dir / "build.toml").lexically_normal();
  if (!std::filesystem::exists(path, ec)) {
    return util::fail(fmt::format("no build.toml in \"{}\"", kernel_dir.string()));
  }
  const auto text = KH_TRY(util::read_file(path));
  auto loaded = read_build_config(text, path.string(), sink);
  if (!loaded) {
    return util::fail(fmt::format("\"{}\" has errors", path.string()));
  }
  return std::move(*loaded);
}

}  // namespace kernelhub::config
