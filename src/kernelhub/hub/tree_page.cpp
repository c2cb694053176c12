// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/tree_page.hpp>

#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelhub::hub {

namespace {

using Json = nlohmann::json;

std::string byte_count(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20)
                                             : fmt::format("{} bytes", bytes);
}

// A SAX handler over one page: `[ {entry}, ... ]`. Depth 1 is the page's array, depth 2 an
// entry's fields, depth 3 its `lfs` object's; a container anywhere else is skipped whole.
// Returning false stops the parser at once, with `m_error` saying why.
class TreePageReader final : public nlohmann::json_sax<Json> {
 public:
  TreePageReader(std::string_view what, const TreeListingLimits& limits, TreeEntries& listing)
      : m_what(what), m_limits(limits), m_listing(listing) {}

  const std::optional<std::string>& error() const { return m_error; }

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }

  bool number_unsigned(number_unsigned_t value) override {
    if (m_skip == 0 && m_depth == 2 && m_key == "size") {
      m_entry.size = value;
      return true;
    }
    if (m_skip == 0 && m_depth == 3 && m_key == "size") {
      m_lfs->size = value;
      return true;
    }
    if (m_skip == 0 && m_depth == 3 && m_key == "pointerSize") {
      m_lfs->pointer_size = value;
      return true;
    }
    return scalar();
  }

  bool string(string_t& value) override {
    if (m_skip == 0 && m_depth == 2) {
      if (m_key == "path") {
        if (value.size() > m_limits.max_path_bytes) {
          return fail(fmt::format("entry {} has a path of {} bytes, over the limit of {} (no "
                                  "cache folder could hold it)",
                                  m_listing.entries.size() + 1, value.size(),
                                  m_limits.max_path_bytes));
        }
        // A copy, not the parser's buffer: that one grew by doubling while it was read, so
        // taking it would hold up to twice the bytes the budget counts.
        m_entry.path.assign(value);
        m_entry.path.shrink_to_fit();
        m_has_path = true;
        return true;
      }
      if (m_key == "oid") {
        m_entry.oid.assign(value);
        m_entry.oid.shrink_to_fit();
        m_has_oid = true;
        return true;
      }
      if (m_key == "type") {
        m_entry.kind = value == "file" ? TreeEntry::Kind::file : TreeEntry::Kind::directory;
        return true;
      }
    }
    if (m_skip == 0 && m_depth == 3 && m_key == "oid") {
      m_lfs->sha256.assign(value);
      m_lfs->sha256.shrink_to_fit();
      return true;
    }
    return scalar();
  }

  bool key(string_t& value) override {
    if (m_skip == 0) {
      m_key = std::move(value);
    }
    return true;
  }

  bool start_object(std::size_t) override {
    if (m_skip > 0) {
      ++m_skip;
      return true;
    }
    if (m_depth == 0) {
      return fail("not a JSON array");
    }
    if (m_depth == 1) {
      m_entry = TreeEntry{};
      m_entry.kind = TreeEntry::Kind::directory;  // anything but "type": "file", absent included
      m_has_path = false;
      m_has_oid = false;
      m_lfs.reset();
      m_depth = 2;
      return true;
    }
    if (m_depth == 2 && m_key == "lfs") {
      m_lfs = LfsInfo{};
      m_depth = 3;
      return true;
    }
    return start_skip();
  }

  bool end_object() override {
    if (m_skip > 0) {
      return end_skip();
    }
    if (m_depth == 3) {
      m_depth = 2;
      return true;
    }
    m_depth = 1;
    return finish_entry();
  }

  bool start_array(std::size_t) override {
    if (m_skip > 0) {
      ++m_skip;
      return true;
    }
    if (m_depth == 0) {
      m_depth = 1;
      return true;
    }
    if (m_depth == 1) {
      return fail("tree entry without `path` or `oid`");
    }
    return start_skip();
  }

  bool end_array() override {
    if (m_skip > 0) {
      return end_skip();
    }
    m_depth = 0;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    if (!m_error) {
      m_error = fmt::format("{}: the server's answer is not JSON", m_what);
    }
    return false;
  }

 private:
  // A value with no use here: inside a skipped container, or a field this reader ignores. At
  // the top or as a page item it is the wrong shape.
  bool scalar() {
    if (m_skip > 0) {
      return true;
    }
    if (m_depth == 0) {
      return fail("not a JSON array");
    }
    if (m_depth == 1) {
      return fail("tree entry without `path` or `oid`");
    }
    clear_field();
    return true;
  }

  // A container that is a field's value: an entry's field other than an `lfs` object, or any
  // inside `lfs`. Skipped whole.
  bool start_skip() {
    clear_field();
    m_skip = 1;
    return true;
  }

  // The current field holds a value of another type than this reader takes: it reads as empty,
  // as a JSON document read field by field would (a path or oid still counts as present), and
  // an `lfs` that is not an object as none; a later duplicate key wins, as in a document.
  void clear_field() {
    if (m_depth == 2) {
      if (m_key == "path") {
        m_entry.path.clear();
        m_has_path = true;
      } else if (m_key == "oid") {
        m_entry.oid.clear();
        m_has_oid = true;
      } else if (m_key == "type") {
        m_entry.kind = TreeEntry::Kind::directory;
      } else if (m_key == "size") {
        m_entry.size = 0;
      } else if (m_key == "lfs") {
        m_lfs.reset();
      }
    } else if (m_depth == 3) {
      if (m_key == "oid") {
        m_lfs->sha256.clear();
      } else if (m_key == "size") {
        m_lfs->size = 0;
      } else if (m_key == "pointerSize") {
        m_lfs->pointer_size = 0;
      }
    }
  }

  bool end_skip() {
    --m_skip;
    return true;
  }

  bool finish_entry() {
    if (!m_has_path || !m_has_oid) {
      return fail("tree entry without `path` or `oid`");
    }
    if (m_lfs) {
      m_entry.lfs = std::move(m_lfs);
      m_lfs.reset();
    }
    const std::size_t held = sizeof(TreeEntry) + m_entry.path.capacity() + m_entry.oid.capacity() +
                             (m_entry.lfs ? m_entry.lfs->sha256.capacity() : 0);
    if (m_listing.held_bytes + held > m_limits.max_bytes) {
      return fail(fmt::format("the listing is over the limit of {} after {} entries (no "
                              "kernel repository's is near that)",
                              byte_count(m_limits.max_bytes), m_listing.entries.size()));
    }
    if (m_listing.entries.size() + 1 > m_limits.max_entries) {
      return fail(fmt::format("the server listed more than {} entries", m_limits.max_entries));
    }
    m_listing.held_bytes += held;
    m_listing.entries.push_back(std::move(m_entry));
    m_entry = TreeEntry{};
    return true;
  }

  bool fail(std::string message) {
    m_error = fmt::format("{}: {}", m_what, message);
    return false;
  }

  std::string_view m_what;
  const TreeListingLimits& m_limits;
  TreeEntries& m_listing;
  int m_depth = 0;
  std::size_t m_skip = 0;  // nesting inside a container being skipped
  std::string m_key;
  TreeEntry m_entry;
  bool m_has_path = false;
  bool m_has_oid = false;
  std::optional<LfsInfo> m_lfs;
  std::optional<std::string> m_error;
};

}  // namespace

HubResult<void> read_tree_page(std::string_view body, std::string_view what,
                               const TreeListingLimits& limits, TreeEntries& listing) {
  const std::size_t kept = listing.entries.size();
  const std::size_t held = listing.held_bytes;
  TreePageReader reader(what, limits, listing);
  if (!Json::sax_parse(body, &reader) || reader.error()) {
    // Nothing of a refused page stays.
    listing.entries.resize(kept);
    listing.held_bytes = held;
    return hub_fail(ErrorKind::invalid_response,
                    reader.error().value_or(fmt::format("{}: the server's answer is not JSON", what)));
  }
  return {};
}

}  // namespace kernelhub::hub
