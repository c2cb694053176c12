// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/checks/python_calls.hpp>
#include <kernelhub/checks/python_statements.hpp>

namespace kernelhub::checks {
namespace {

using ::testing::ElementsAre;

struct Parsed {
  TokenizedSource tokenized;
  std::vector<Statement> statements;
};

Parsed parse(std::string_view source) {
  Parsed parsed;
  parsed.tokenized = tokenize_python(source);
  parsed.statements = split_statements(parsed.tokenized.tokens);
  return parsed;
}

// "<first token>@<enclosing keywords joined by '/'>" per statement.
std::vector<std::string> shapes(std::string_view source) {
  const auto parsed = parse(source);
  std::vector<std::string> out;
  for (const auto& statement : parsed.statements) {
    std::string blocks;
    for (const auto& block : statement.blocks) {
      blocks += (blocks.empty() ? "" : "/") + block.keyword;
    }
    out.push_back(std::string(statement.tokens[0].text) + "@" + blocks);
  }
  return out;
}

TEST(PythonStatements, BlocksFollowIndentation) {
  EXPECT_THAT(shapes("import a\n"
                     "try:\n"
                     "    import b\n"
                     "except ImportError:\n"
                     "    b = None\n"
                     "def f(x: int) -> int:\n"
                     "    if x:\n"
                     "        return 1\n"
                     "    return 2\n"
                     "y = 3; z = 4\n"),
              ElementsAre("import@", "try@", "import@try", "except@", "b@except", "def@",
                          "if@def", "return@def/if", "return@def", "y@", "z@"));
}

TEST(PythonStatements, InlineBodiesBelongToTheirHeader) {
  EXPECT_THAT(shapes("try: import a\nexcept ImportError: pass\nif TYPE_CHECKING: import b\n"),
              ElementsAre("try@", "import@try", "except@", "pass@except", "if@", "import@if"));
  const auto parsed = parse("if TYPE_CHECKING: import b\nelse:\n    import c\n");
  EXPECT_TRUE(parsed.statements[1].type_checking_only());
  EXPECT_FALSE(parsed.statements[2].type_checking_only());
}

TEST(PythonStatements, LambdaColonsAndDictsDoNotEndHeaders) {
  EXPECT_THAT(shapes("if f(lambda x: x, {1: 2}): import a\n"), ElementsAre("if@", "import@if"));
}

TEST(PythonStatements, MatchIsASoftKeyword) {
  EXPECT_THAT(shapes("match = 1\nmatch x:\n    case 1:\n        import a\n"),
              ElementsAre("match@", "match@", "case@match", "import@match/case"));
}

TEST(PythonStatements, ImportsInEveryForm) {
  const auto parsed = parse(
      "import os, torch.library as tl\n"
      "from . import _ops\n"
      "from ..pkg.mod import (a as b,\n    c,)\n"
      "from torch.library import *\n");
  const auto imports = find_imports(parsed.statements);
  ASSERT_EQ(imports.size(), 5u);
  EXPECT_EQ(imports[0].module, "os");
  EXPECT_EQ(imports[1].module, "torch.library");
  EXPECT_EQ(imports[1].alias, "tl");
  EXPECT_EQ(imports[2].level, 1);
  EXPECT_EQ(imports[2].module, "");
  EXPECT_EQ(imports[2].names[0].first, "_ops");
  EXPECT_EQ(imports[3].level, 2);
  EXPECT_EQ(imports[3].module, "pkg.mod");
  EXPECT_EQ(imports[3].names, (std::vector<std::pair<std::string, std::string>>{{"a", "b"},
                                                                                 {"c", ""}}));
  EXPECT_EQ(imports[3].line, 3u);
  EXPECT_EQ(imports[4].names[0].first, "*");
}

TEST(PythonCalls, CalleesArgumentsAndDecorators) {
  const auto parsed = parse(
      "@torch.library.custom_op(\"a::b\", mutates_args=(), *rest, **kw)\n"
      "def f(x): return g(h(1), [2, 3])\n"
      "y = Lib(\"n\").define(\"s\")\n");
  const auto calls = find_calls(parsed.statements);
  std::vector<std::string> names;
  for (const auto& call : calls) {
    std::string name;
    for (const auto& part : call.callee) {
      name += (name.empty() ? "" : ".") + (part.empty() ? "<expr>" : part);
    }
    names.push_back(name);
  }
  EXPECT_THAT(names, ElementsAre("torch.library.custom_op", "g", "h", "Lib", "<expr>.define"));
  EXPECT_TRUE(calls[0].decorator);
  ASSERT_EQ(calls[0].arguments.size(), 4u);
  EXPECT_EQ(calls[0].argument(0, "name")->value[0].value, "a::b");
  EXPECT_EQ(calls[0].arguments[1].keyword, "mutates_args");
  EXPECT_TRUE(calls[0].arguments[2].starred);
  EXPECT_TRUE(calls[0].arguments[3].starred);
  EXPECT_FALSE(calls[1].decorator);
  EXPECT_EQ(calls[1].arguments.size(), 2u);
  EXPECT_EQ(calls[4].line, 3u);
}

TEST(PythonCalls, IsCallTo) {
  const auto parsed = parse("a(x)\nm.a(b(c))\na(x) + 1\nb.a\n");
  EXPECT_TRUE(is_call_to(parsed.statements[0].tokens, "a"));
  EXPECT_TRUE(is_call_to(parsed.statements[1].tokens, "a"));
  EXPECT_FALSE(is_call_to(parsed.statements[2].tokens, "a"));
  EXPECT_FALSE(is_call_to(parsed.statements[3].tokens, "a"));
}

}  // namespace
}  // namespace kernelhub::checks
