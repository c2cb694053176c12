// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/codegen/card_python_reader.hpp>

namespace kernelhub::codegen {
namespace {

using Names = std::vector<std::string>;

TEST(CardPythonReader, ReadsSingleAndMultiLineLists) {
  EXPECT_EQ(read_dunder_all(R"(__all__ = ["func_a", "func_b"])"), (Names{"func_a", "func_b"}));
  EXPECT_EQ(read_dunder_all("__all__ = [\n    \"a\",  # the first\n    'b',\n    \"c\",\n]\n"),
            (Names{"a", "b", "c"}));
}

TEST(CardPythonReader, MissingOrEmptyIsNone) {
  EXPECT_EQ(read_dunder_all(""), std::nullopt);
  EXPECT_EQ(read_dunder_all("import torch\n\ndef f():\n    pass\n"), std::nullopt);
  EXPECT_EQ(read_dunder_all("__all__ = []\n"), std::nullopt);
  EXPECT_EQ(read_dunder_all("__all__ = [name_a, name_b]\n"), std::nullopt);
  // An unterminated string: the reference's parser fails and so do we.
  EXPECT_EQ(read_dunder_all("__all__ = [\"a]\n"), std::nullopt);
}

TEST(CardPythonReader, SkipsElementsThatAreNotPlainStrings) {
  EXPECT_EQ(read_dunder_all(R"(__all__ = ["a", other, *more, f"x{y}", b"raw", "b" + "c", "d"])"),
            (Names{"a", "d"}));
  // Adjacent literals are one string; escapes are decoded.
  EXPECT_EQ(read_dunder_all(R"(__all__ = ["re" 'lu', "t\x61b", r"\d"])"),
            (Names{"relu", "tab", "\\d"}));
}

TEST(CardPythonReader, OnlyModuleLevelAssignmentsCount) {
  const char* source = R"(
"""A docstring that mentions __all__ = ["not_this"]."""
import torch

if torch.cuda.is_available():
    __all__ = ["cuda_only"]

def helper():
    __all__ = ["inner"]
    return 1

text = '''
__all__ = ["in_a_string"]
'''
__all__ = ["real"]
)";
  EXPECT_EQ(read_dunder_all(source), (Names{"real"}));
  EXPECT_EQ(read_dunder_all("if x: y = 1; __all__ = ['nested']\n__all__ = ['top']\n"),
            (Names{"top"}));
}

TEST(CardPythonReader, FirstNonEmptyAssignmentWins) {
  EXPECT_EQ(read_dunder_all("__all__ = []\n__all__ = ['a']\n__all__ = ['b']\n"), (Names{"a"}));
  EXPECT_EQ(read_dunder_all("__all__ += ['x']\n__all__ = ['a']\n"), (Names{"a"}));
  EXPECT_EQ(read_dunder_all("__all__ == ['x']\n__all__ = ['a']\n"), (Names{"a"}));
}

TEST(CardPythonReader, AcceptsOtherSpellingsOfTheAssignment) {
  EXPECT_EQ(read_dunder_all("x = __all__ = ['a']\n"), (Names{"a"}));
  EXPECT_EQ(read_dunder_all("__all__ = x = ['a']\n"), (Names{"a"}));
  EXPECT_EQ(read_dunder_all("import os; __all__ = ['a']\n"), (Names{"a"}));
  EXPECT_EQ(read_dunder_all("__all__ = \\\n  ['a']\n"), (Names{"a"}));
  EXPECT_EQ(read_dunder_all("__all__: list[str] = ['a', 'b']\n"), (Names{"a", "b"}));
  EXPECT_EQ(read_dunder_all("__all__ = ('a', 'b',)\n"), (Names{"a", "b"}));
  EXPECT_EQ(read_dunder_all("__all__ = 'a', 'b'\n"), (Names{"a", "b"}));
  EXPECT_EQ(read_dunder_all("__all__ = ('a')\n"), std::nullopt);  // a string, not a tuple
  EXPECT_EQ(read_dunder_all("__all__ = ['a'] + other\n"), std::nullopt);
  EXPECT_EQ(read_dunder_all("__all__ = [\r\n  'a',\r\n]\r\n"), (Names{"a"}));
}

TEST(CardPythonReader, ReadsModuleLevelClassNames) {
  const char* source = R"(
import torch.nn as nn


class ReLU(nn.Module):
    class Inner:
        pass

    def forward(self, x):
        return x


@dataclass
class Softmax(nn.Module):
    pass

if False:
    class Hidden: pass
class Last: pass
)";
  EXPECT_EQ(read_class_names(source), (Names{"ReLU", "Softmax", "Last"}));
  EXPECT_TRUE(read_class_names("x = 'class NotOne: pass'\n").empty());
}

TEST(CardPythonReader, ForwardParametersOfEachClass) {
  const std::string_view source = R"(import torch


class Plain(nn.Module):
    has_backward = False

    @torch.no_grad()
    def forward(self, x: torch.Tensor, scale: float = (1.0, 2.0)[0]) -> torch.Tensor:
        return x


class Everything(nn.Module):
    def helper(self, a, b, c):
        pass

    def forward(self, x, /, y: dict[str, int] = {"a": 1}, *args, key, **kwargs):
        def forward(inner):
            pass
        return x


class NoForward:
    pass

def forward(self, not_a_method):
    pass
)";
  const auto forwards = read_forward_parameters(source);
  EXPECT_EQ(forwards, (std::map<std::string, std::string>{
                          {"Plain", "self, x, scale"},
                          {"Everything", "self, x, /, y, *args, key, **kwargs"}}));
  EXPECT_EQ(read_forward_parameters("class Bare:\n    def forward(self, *, key):\n        pass\n"),
            (std::map<std::string, std::string>{{"Bare", "self, *, key"}}));
}

}  // namespace
}  // namespace kernelhub::codegen
