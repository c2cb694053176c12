// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/violation.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kernelhub::abi {
namespace {

Violation make(std::string library, Rule rule, std::string symbol) {
  return Violation{std::move(library), rule, std::move(symbol), {}, "v", "message", "hint"};
}

TEST(Violation, SortedAndDeduplicated) {
  ViolationCollector sink;
  sink.report(make("b.so", Rule::manylinux, "x"));
  sink.report(make("a.so", Rule::python_abi, "y"));
  sink.report(make("a.so", Rule::manylinux, "z"));
  sink.report(make("b.so", Rule::manylinux, "x"));
  auto sorted = sink.sorted();
  ASSERT_EQ(sorted.size(), 3u);
  EXPECT_EQ(sorted[0].symbol, "z");
  EXPECT_EQ(sorted[1].symbol, "y");
  EXPECT_EQ(sorted[2].library, "b.so");
}

TEST(Violation, DiagnosticAndJson) {
  auto violation = make("lib.so", Rule::torch_stable_abi, "_ZN3c105ErrorD1Ev");
  auto diagnostic = to_diagnostic(violation);
  EXPECT_EQ(util::render(diagnostic), "lib.so: error: [torch-stable-abi] message\n  hint: hint\n");
  auto json = nlohmann::json::parse(violations_to_json({"lib.so"}, {violation}));
  EXPECT_EQ(json["ok"], false);
  EXPECT_EQ(json["libraries"][0], "lib.so");
  EXPECT_EQ(json["violations"][0]["rule"], "torch-stable-abi");
  EXPECT_EQ(json["violations"][0]["symbol"], "_ZN3c105ErrorD1Ev");
  EXPECT_EQ(nlohmann::json::parse(violations_to_json({}, {}))["ok"], true);
}

}  // namespace
}  // namespace kernelhub::abi
