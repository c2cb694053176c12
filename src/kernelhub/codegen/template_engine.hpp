// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <kernelhub/util/expected.hpp>

// A small Jinja-compatible template engine, enough for the init templates and the kernel card
// (the reference renders both with minijinja; Debian packages no Jinja library for C++).
//
// Supported syntax:
//   {{ expr }}                     output; printing an undefined value is an error
//   {% if %} {% elif %} {% else %} {% endif %}
//   {% for x in expr %} ... {% else %} ... {% endfor %}   with loop.index/index0/first/last/
//                                  length/revindex/revindex0
//   {% raw %} ... {% endraw %}     copied verbatim
//   {# comment #}                  dropped
//   {%- -%} {{- -}} {#- -#}        strip whitespace on that side
// Expressions: literals ('s', "s", 12, 1.5, true/false/none, [a, b]), names with `.attr` and
// `[index]`, filters (`x | lower`, `xs | join(", ")`), `~` concatenation, `==`, `!=`, `in`,
// `not in`, `is [not] defined|undefined|none`, `not`, `and`, `or`, parentheses.
//
// `trim_blocks` is always on (the newline after a block or comment tag is dropped), as in
// every environment the reference sets up. Undefined names are falsy, iterate as empty and
// compare equal only to each other; using one as text is an error, which catches typos in
// templates instead of silently printing nothing.
namespace kernelhub::codegen {

// Whether whitespace before a block tag on its own line is removed (Jinja's lstrip_blocks).
enum class LstripBlocks { no, yes };
// Whether a single trailing newline of the template survives rendering. Jinja's default
// (and the reference's) is to strip it.
enum class TrailingNewline { strip, keep };

struct TemplateOptions {
  LstripBlocks lstrip_blocks = LstripBlocks::no;
  TrailingNewline trailing_newline = TrailingNewline::strip;
};

// A parsed template. Errors, from parsing and rendering alike, read
// "<name>:<line>:<column>: <message>" with 1-based positions in the template text.
class Template {
 public:
  static util::Expected<Template> parse(std::string_view text, std::string name,
                                        TemplateOptions options = {});

  // Renders with `context`, which must be a JSON object (its keys are the template's names).
  util::Expected<std::string> render(const nlohmann::json& context) const;

  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  ~Template();

 private:
  struct Impl;
  explicit Template(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

// Parses and renders in one step.
util::Expected<std::string> render_template(std::string_view text, std::string name,
                                            const nlohmann::json& context,
                                            TemplateOptions options = {});

}  // namespace kernelhub::codegen
