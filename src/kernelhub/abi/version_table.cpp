// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/version_table.hpp>

#include <vector>

#include <fmt/format.h>

namespace kernelhub::abi {

util::Expected<VersionTable> VersionTable::parse(std::string_view text,
                                                 std::size_t version_column) {
  VersionTable table;
  std::size_t line_number = 0;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') {
      continue;
    }
    std::vector<std::string_view> columns;
    for (std::size_t start = 0;;) {
      auto tab = line.find('\t', start);
      columns.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
      if (tab == std::string_view::npos) {
        break;
      }
      start = tab + 1;
    }
    if (columns.size() <= version_column || columns[0].empty()) {
      return util::fail(fmt::format("line {}: expected at least {} tab-separated columns",
                                    line_number, version_column + 1));
    }
    auto version = types::Version::parse(columns[version_column]);
    if (!version) {
      return util::fail(fmt::format("line {}: {}", line_number, version.error().message));
    }
    table.m_versions.insert_or_assign(std::string(columns[0]), std::move(*version));
  }
  return table;
}

const types::Version* VersionTable::find(std::string_view name) const {
  auto found = m_versions.find(name);
  return found == m_versions.end() ? nullptr : &found->second;
}

}  // namespace kernelhub::abi
