// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/checks/python_tokenizer.hpp>

namespace kernelhub::checks {
namespace {

// "kind:text" for every token but the final end, newlines as "NL".
std::vector<std::string> kinds_and_texts(std::string_view source) {
  std::vector<std::string> out;
  for (const auto& token : tokenize_python(source).tokens) {
    switch (token.kind) {
      case TokenKind::name: out.push_back("N:" + std::string(token.text)); break;
      case TokenKind::number: out.push_back("0:" + std::string(token.text)); break;
      case TokenKind::string: out.push_back("S:" + std::string(token.text)); break;
      case TokenKind::op: out.push_back("O:" + std::string(token.text)); break;
      case TokenKind::newline: out.push_back("NL"); break;
      case TokenKind::end: break;
    }
  }
  return out;
}

TEST(PythonTokenizer, NamesOperatorsAndNumbers) {
  EXPECT_EQ(kinds_and_texts("x = a.b(1.5e-3, 0x1F) ** 2\n"),
            (std::vector<std::string>{"N:x", "O:=", "N:a", "O:.", "N:b", "O:(", "0:1.5e-3", "O:,",
                                      "0:0x1F", "O:)", "O:**", "0:2", "NL"}));
}

TEST(PythonTokenizer, CommentsAreSkippedAndNewlinesInsideBracketsDoNotEndALine) {
  EXPECT_EQ(kinds_and_texts("f(a,  # custom_op(\"x::y\")\n  b)\n# only a comment\n"),
            (std::vector<std::string>{"N:f", "O:(", "N:a", "O:,", "N:b", "O:)", "NL"}));
}

TEST(PythonTokenizer, BackslashContinuationJoinsLines) {
  EXPECT_EQ(kinds_and_texts("x = 1 + \\\n    2\ny = 3"),
            (std::vector<std::string>{"N:x", "O:=", "0:1", "O:+", "0:2", "NL", "N:y", "O:=",
                                      "0:3", "NL"}));
}

TEST(PythonTokenizer, EveryStringPrefixAndQuote) {
  for (std::string prefix : {"", "r", "R", "u", "U", "b", "B", "f", "F", "rb", "Rb", "bR", "BR",
                             "fr", "Rf", "t", "tr"}) {
    for (std::string quote : {"'", "\"", "'''", "\"\"\""}) {
      const auto literal = prefix + quote + "a::b" + quote;
      const auto source = "x = " + literal + "\n";  // tokens view into it
      const auto tokens = tokenize_python(source).tokens;
      ASSERT_EQ(tokens.size(), 5u) << literal;
      EXPECT_EQ(tokens[2].kind, TokenKind::string) << literal;
      EXPECT_EQ(tokens[2].text, literal);
      EXPECT_EQ(tokens[2].value, "a::b") << literal;
      EXPECT_EQ(tokens[2].formatted, prefix.find_first_of("fFtT") != std::string::npos);
    }
  }
}

TEST(PythonTokenizer, AnInvalidPrefixIsANameFollowedByAString) {
  EXPECT_EQ(kinds_and_texts("ur'x'"), (std::vector<std::string>{"N:ur", "S:'x'", "NL"}));
}

TEST(PythonTokenizer, EscapedQuotesAndRawBackslashesStayInside) {
  EXPECT_EQ(kinds_and_texts(R"(a = 'it\'s'; b = r"\"" ; c = "\\")"),
            (std::vector<std::string>{"N:a", "O:=", R"(S:'it\'s')", "O:;", "N:b", "O:=",
                                      R"(S:r"\"")", "O:;", "N:c", "O:=", R"(S:"\\")", "NL"}));
}

TEST(PythonTokenizer, TripleQuotedStringsSpanLinesAndHideCode) {
  const auto tokens = tokenize_python("s = \"\"\"\n@custom_op(\"x::y\")\n'\"\"\"\nz = 1\n").tokens;
  ASSERT_GE(tokens.size(), 4u);
  EXPECT_EQ(tokens[2].kind, TokenKind::string);
  EXPECT_EQ(tokens[2].value, "\n@custom_op(\"x::y\")\n'");
  EXPECT_EQ(tokens[4].text, "z");
  EXPECT_EQ(tokens[4].line, 4u);
}

TEST(PythonTokenizer, FStringsWithNestedQuotesBracesAndFormatSpecs) {
  // Python 3.12 allows the same quote inside a replacement field.
  const std::string source =
      "a = f\"{x[\"k\"]:>{width}} {{literal}} {d['}']!r}\"\nb = f'''{'''\n'''}'''\nc = 1\n";
  const auto tokens = tokenize_python(source).tokens;
  ASSERT_FALSE(tokenize_python(source).error);
  EXPECT_EQ(tokens[2].kind, TokenKind::string);
  EXPECT_TRUE(tokens[2].formatted);
  EXPECT_EQ(tokens[3].kind, TokenKind::newline);
  EXPECT_EQ(tokens[6].kind, TokenKind::string);
  EXPECT_EQ(tokens[8].text, "c");
  EXPECT_EQ(tokens[8].line, 4u);
}

TEST(PythonTokenizer, LinesAndColumnsAreOneBasedBytes) {
  const auto tokens = tokenize_python("if x:\n    @deco(1)\r\n    y\n").tokens;
  // if x : NL @ deco ( 1 ) NL y NL end
  EXPECT_EQ(tokens[4].text, "@");
  EXPECT_EQ(tokens[4].line, 2u);
  EXPECT_EQ(tokens[4].column, 5u);
  EXPECT_EQ(tokens[10].text, "y");
  EXPECT_EQ(tokens[10].line, 3u);
  EXPECT_EQ(tokens[10].column, 5u);
}

TEST(PythonTokenizer, UnterminatedStringsAreErrorsWithTheirPosition) {
  auto single = tokenize_python("x = 1\ny = 'abc\nz = 2\n");
  ASSERT_TRUE(single.error);
  EXPECT_EQ(single.error->line, 2u);
  EXPECT_EQ(single.error->message, "unterminated string");
  auto triple = tokenize_python("x = \"\"\"abc\n");
  ASSERT_TRUE(triple.error);
  EXPECT_EQ(triple.error->message, "unterminated triple-quoted string");
}

TEST(PythonTokenizer, KeywordsAreKnown) {
  EXPECT_TRUE(is_python_keyword("import"));
  EXPECT_TRUE(is_python_keyword("lambda"));
  EXPECT_FALSE(is_python_keyword("match"));  // soft keyword: also a valid name
  EXPECT_FALSE(is_python_keyword("custom_op"));
}

}  // namespace
}  // namespace kernelhub::checks
