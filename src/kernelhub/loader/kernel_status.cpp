// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/kernel_status.hpp>

#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <kernelhub/util/file_io.hpp>
#include <kernelhub/util/toml_depth.hpp>

namespace kernelhub::loader {

namespace {

// Python's repr() of a TOML value, for the "Unknown kernel status kind" message.
std::string python_repr(const toml::node& node) {
  if (const auto* text = node.as_string()) {
    return fmt::format("'{}'", text->get());
  }
  if (const auto* flag = node.as_boolean()) {
    return flag->get() ? "True" : "False";
  }
  std::ostringstream out;
  node.visit([&](const auto& value) { out << value; });
  return out.str();
}

// Python's truthiness of `data.get(key)` for the fields the reference tests with `not`.
bool truthy(const toml::node* node) {
  if (node == nullptr) {
    return false;
  }
  if (const auto* text = node->as_string()) {
    return !text->get().empty();
  }
  if (const auto* flag = node->as_boolean()) {
    return flag->get();
  }
  if (const auto* integer = node->as_integer()) {
    return integer->get() != 0;
  }
  if (const auto* array = node->as_array()) {
    return !array->empty();
  }
  if (const auto* table = node->as_table()) {
    return !table->empty();
  }
  return true;
}

}  // namespace

LoadResult<KernelRedirect> parse_kernel_status(std::string_view text) {
  // The file comes from the Hub: a key of thousands of dotted parts must not crash the
  // loader inside toml++ (issue 12).
  if (const auto deep = util::find_over_deep_toml(text)) {
    return load_fail(LoadErrorKind::value,
                     fmt::format("kernel-status.toml is not valid TOML: line {}, column {}: {}",
                                 deep->line, deep->column, deep->message));
  }
  toml::table data;
  try {
    data = toml::parse(text, std::string_view("kernel-status.toml"));
  } catch (const toml::parse_error& error) {
    return load_fail(LoadErrorKind::value,
                     fmt::format("kernel-status.toml is not valid TOML: {}", error.description()));
  }
  const toml::node* kind = data.get("kind");
  if (!truthy(kind)) {
    return load_fail(LoadErrorKind::value, "kernel-status.toml must contain a 'kind' field");
  }
  if (kind->value<std::string>() != std::optional<std::string>("redirect")) {
    return load_fail(LoadErrorKind::value,
                     fmt::format("Unknown kernel status kind: {}", python_repr(*kind)));
  }
  const toml::node* destination = data.get("destination");
  if (!truthy(destination) || !destination->is_string()) {
    return load_fail(LoadErrorKind::value, "kernel-status.toml must contain a 'destination' field");
  }
  KernelRedirect redirect;
  redirect.destination = *destination->value<std::string>();
  redirect.revision = data["revision"].value<std::string>().value_or("main");
  return redirect;
}

LoadResult<std::optional<KernelRedirect>> fetch_kernel_status(const cache::HubCache& cache,
                                                              const hub::RepoId& repo,
                                                              const std::string& revision) {
  const hub::RepoRef ref{repo, hub::RepoType::kernel};
  // Every failure, not only "no such file", counts as no status: the reference catches
  // EntryNotFoundError, which its client also raises for a network failure with nothing cached.
  const auto path = cache.file_download(ref, revision, "kernel-status.toml");
  if (!path) {
    return std::optional<KernelRedirect>();
  }
  const auto text = util::read_file(*path);
  if (!text) {
    return load_fail(LoadErrorKind::io, text.error().message);
  }
  auto redirect = parse_kernel_status(*text);
  if (!redirect) {
    return tl::unexpected(redirect.error());
  }
  return std::optional<KernelRedirect>(std::move(*redirect));
}

std::string redirect_warning(std::string_view from, std::string_view to) {
  return fmt::format("'{}' redirected to '{}'", from, to);
}

}  // namespace kernelhub::loader
