// SPDX-License-Identifier: Apache-2.0
// Golden expectations: every rendered string below was also produced by Python's Jinja2 3.1
// with trim_blocks=True (and lstrip_blocks / keep_trailing_newline where a test sets them),
// except where a comment names a deliberate difference (tojson here does not HTML-escape).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <kernelhub/codegen/template_engine.hpp>

namespace kernelhub::codegen {
namespace {

using nlohmann::json;

std::string render_ok(std::string_view text, const json& context = json::object(),
                      TemplateOptions options = {}) {
  auto result = render_template(text, "t", context, options);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? *result : "";
}

std::string render_error(std::string_view text, const json& context = json::object()) {
  auto result = render_template(text, "t", context);
  EXPECT_FALSE(result.has_value()) << "rendered: " << (result ? *result : "");
  return result ? "" : result.error().message;
}

TEST(TemplateEngine, StripsOneTrailingNewlineUnlessKept) {
  EXPECT_EQ(render_ok("a\n"), "a");
  EXPECT_EQ(render_ok("a\n", json::object(), {.trailing_newline = TrailingNewline::keep}), "a\n");
  EXPECT_EQ(render_ok("a\n\n"), "a\n");
}

TEST(TemplateEngine, PrintsDottedNamesAndItems) {
  const json context = {{"a", {{"b", {{"c", "x"}}}}}, {"xs", {"p", "q"}}};
  EXPECT_EQ(render_ok("{{ a.b.c }}|{{ xs[0] }}-{{ xs[-1] }}", context), "x|p-q");
  EXPECT_EQ(render_ok("{{ a['b'].c }}", context), "x");
}

TEST(TemplateEngine, AppliesFilters) {
  const json context = {{"name", "ReLU"}, {"xs", {"a", "b"}}};
  EXPECT_EQ(render_ok("{{ name | lower }} {{ xs | join(\", \") }} {{ xs|length }} "
                      "{{ missing | default(\"d\") }} {{ \"a-b\" | replace(\"-\", \"_\") | upper }}",
                      context),
            "relu a, b 2 d A_B");
  EXPECT_EQ(render_ok("{{ xs | first }}{{ xs | last }}{{ '  t ' | trim }}", context), "abt");
  EXPECT_EQ(render_ok("{{ q | tojson }} {{ xs | tojson }}", {{"q", "a \"b\"\\"}, {"xs", {1, "x"}}}),
            "\"a \\\"b\\\"\\\\\" [1,\"x\"]");
}

TEST(TemplateEngine, EvaluatesConditions) {
  const json context = {{"a", 1}, {"b", json::array()}, {"c", "x"},     {"s", "cuda"},
                        {"d", {{"k", 1}}}, {"l", {1, 2}}};
  EXPECT_EQ(render_ok("{% if a and not b %}1{% elif c == 'x' %}2{% else %}3{% endif %}|"
                      "{% if 'u' in s and 'k' in d and 2 in l and 'z' not in s %}in{% endif %}",
                      context),
            "1|in");
  EXPECT_EQ(render_ok("{% if b %}1{% elif c != 'x' %}2{% else %}3{% endif %}", context), "3");
  EXPECT_EQ(render_ok("{% if b %}1{% elif c == 'x' %}2{% endif %}", context), "2");
}

TEST(TemplateEngine, TreatsEmptyValuesAsFalse) {
  const json context = {{"e", json::array()}, {"z", 0}, {"n", nullptr}, {"s", ""}};
  EXPECT_EQ(render_ok("{% if e or z or n or s or missing %}t{% else %}f{% endif %}", context), "f");
}

TEST(TemplateEngine, IteratesWithLoopState) {
  EXPECT_EQ(render_ok("{% for x in xs %}{{ loop.index }}:{{ x }}{% if not loop.last %}, {% endif %}"
                      "{% endfor %}",
                      {{"xs", {"a", "b", "c"}}}),
            "1:a, 2:b, 3:c");
  EXPECT_EQ(render_ok("{% for o in outer %}{% for i in o %}{{ loop.index0 }}{{ i }}{% endfor %};"
                      "{{ loop.revindex }}{% endfor %}",
                      {{"outer", {{"a", "b"}, {"c"}}}}),
            "0a1b;20c;1");
  EXPECT_EQ(render_ok("{% for x in xs %}{{ x }}{% else %}empty{% endfor %}", {{"xs", json::array()}}),
            "empty");
  // Deliberate difference: Jinja2 keeps a dict's insertion order; JSON objects are key-sorted.
  EXPECT_EQ(render_ok("{% for k in d %}{{ k }}={{ d[k] }} {% endfor %}", {{"d", {{"b", 2}, {"a", 1}}}}),
            "a=1 b=2 ");
}

TEST(TemplateEngine, CopiesRawBlocksVerbatim) {
  EXPECT_EQ(render_ok("{% raw %}{{ x }}{% if %}{% endraw %}"), "{{ x }}{% if %}");
  EXPECT_EQ(render_ok("{% raw -%}\n  kept {{ x }}\n  {%- endraw %}\nafter"), "kept {{ x }}after");
  EXPECT_EQ(render_ok("x\n  {% raw %}\n{{ y }}\n  {% endraw %}\nz", json::object(),
                      {.lstrip_blocks = LstripBlocks::yes}),
            "x\n\n{{ y }}\nz");
}

TEST(TemplateEngine, TrimsBlocksAndDropsComments) {
  EXPECT_EQ(render_ok("a\n{# c #}\nb"), "a\nb");
  EXPECT_EQ(render_ok("{% if true %}\nyes\n{% endif %}\nno"), "yes\nno");
  EXPECT_EQ(render_ok("a  {{- x -}}  b", {{"x", "X"}}), "aXb");
}

TEST(TemplateEngine, LstripBlocksIsOptional) {
  const std::string_view text = "  {% if true %}\n  x\n  {% endif %}\n";
  EXPECT_EQ(render_ok(text, json::object(), {.lstrip_blocks = LstripBlocks::yes}), "  x\n");
  EXPECT_EQ(render_ok(text), "    x\n  ");
}

TEST(TemplateEngine, ConcatenatesAndPrintsScalars) {
  EXPECT_EQ(render_ok("{{ 'x' ~ n ~ 1.5 }}", {{"n", 2}}), "x21.5");
  // Deliberate difference: minijinja's spelling (the reference's engine), not Jinja2's True/None.
  EXPECT_EQ(render_ok("{{ t }} {{ n }} {{ [1, 'a'] }}", {{"t", true}, {"n", nullptr}}),
            "true none [1, \"a\"]");
}

TEST(TemplateEngine, TestsDefinedness) {
  EXPECT_EQ(render_ok("{% if x is defined %}d{% endif %}{% if y is not defined %}u{% endif %}"
                      "{% if n is none %}n{% endif %}",
                      {{"x", 1}, {"n", nullptr}}),
            "dun");
}

TEST(TemplateEngine, RendersAParsedTemplateMoreThanOnce) {
  auto parsed = Template::parse("{{ who }}!", "t");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed->render({{"who", "a"}}), "a!");
  EXPECT_EQ(*parsed->render({{"who", "b"}}), "b!");
  EXPECT_FALSE(parsed->render(json::array()).has_value());
}

TEST(TemplateEngine, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(render_error("line\n  {{ nope }}"), "t:2:6: \"nope\" is undefined");
  EXPECT_EQ(render_error("{{ a.b }}", {{"a", json::object()}}), "t:1:5: \"a.b\" is undefined");
  EXPECT_EQ(render_error("{{ x | lowr }}", {{"x", "a"}}),
            "t:1:8: unknown filter \"lowr\"; did you mean \"lower\"?");
  EXPECT_EQ(render_error("\n{% iff x %}{% endif %}"),
            "t:2:4: unknown statement \"iff\"; did you mean \"if\"?");
  EXPECT_EQ(render_error("a\n{% if x %}\nb"), "t:2:1: unclosed \"if\" block: missing {% endif %}");
  EXPECT_EQ(render_error("{% for x in y %}"), "t:1:1: unclosed \"for\" block: missing {% endfor %}");
  EXPECT_EQ(render_error("{% endif %}"), "t:1:4: unexpected \"endif\" outside any block");
  EXPECT_EQ(render_error("{% for x in y %}{% endif %}"),
            "t:1:20: unexpected \"endif\" inside the \"for\" block at t:1:1");
  EXPECT_EQ(render_error("{{ 'abc }}"), "t:1:4: unterminated string");
  EXPECT_EQ(render_error("x {{ a "), "t:1:3: unclosed tag: missing \"}}\"");
  EXPECT_EQ(render_error("{# never closed"), "t:1:1: unclosed comment: missing \"#}\"");
  EXPECT_EQ(render_error("{% raw %}x"), "t:1:1: unclosed \"raw\" block: missing {% endraw %}");
  EXPECT_EQ(render_error("{{ a b }}", {{"a", 1}}), "t:1:6: unexpected \"b\" in tag");
  EXPECT_EQ(render_error("{{ x | join(1, 2) }}", {{"x", json::array()}}),
            "t:1:8: filter \"join\" takes 0 to 1 arguments, got 2");
  EXPECT_EQ(render_error("{{ x | lower }}", {{"x", 3}}),
            "t:1:8: filter \"lower\" expects a string, got number");
  EXPECT_EQ(render_error("{% for x in n %}{% endfor %}", {{"n", 3}}),
            "t:1:13: cannot iterate over number");
  EXPECT_EQ(render_error("{{ x is defind }}"),
            "t:1:9: unknown test \"defind\"; did you mean \"defined\"?");
  EXPECT_EQ(render_error("{{ @ }}"), "t:1:4: unexpected character \"@\"");
}

TEST(TemplateEngine, RejectsRunawayNesting) {
  std::string deep_ifs;
  for (int i = 0; i < 100; ++i) {
    deep_ifs += "{% if true %}";
  }
  EXPECT_NE(render_error(deep_ifs).find("nested too deeply"), std::string::npos);
  const std::string deep_parens = "{{ " + std::string(100, '(') + "1" + std::string(100, ')') + " }}";
  EXPECT_NE(render_error(deep_parens).find("nested too deeply"), std::string::npos);
  std::string long_chain = "{{ a";
  for (int i = 0; i < 600; ++i) {
    long_chain += " or a";
  }
  EXPECT_NE(render_error(long_chain + " }}").find("tag is too long"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::codegen
