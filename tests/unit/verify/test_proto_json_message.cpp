// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/verify/proto_json_message.hpp>

using kernelhub::verify::ProtoJsonMessage;
using nlohmann::json;

TEST(ProtoJsonMessage, KnownFieldsInEitherSpellingAndNullAsAbsent) {
  const json value = {{"logIndex", "7"}, {"integrated_time", "12"}, {"kindVersion", nullptr}};
  const ProtoJsonMessage message(value, "entry");
  EXPECT_TRUE(message.only({"logIndex", "integratedTime", "kindVersion"}));
  EXPECT_EQ(message.uint64("logIndex").value(), 7u);
  EXPECT_EQ(message.uint64("integratedTime").value(), 12u);
  EXPECT_EQ(message.get("kindVersion"), nullptr);
  const auto missing = message.required("kindVersion");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "\"entry.kindVersion\": field required");
}

TEST(ProtoJsonMessage, RefusesExtraKeysNumbersForUint64AndNonLists) {
  const json value = {{"logIndex", 7}, {"extra", true}, {"hashes", "x"}};
  const ProtoJsonMessage message(value, "entry");
  const auto extra = message.only({"logIndex", "hashes"});
  ASSERT_FALSE(extra);
  EXPECT_EQ(extra.error().message, "\"entry.extra\": extra inputs are not permitted");
  const auto number = message.uint64("logIndex");
  ASSERT_FALSE(number);
  EXPECT_NE(number.error().message.find("expected protobuf uint64 as string"), std::string::npos);
  EXPECT_FALSE(message.array("hashes", false));
  EXPECT_TRUE(message.array("absent", false).value().empty());
  EXPECT_FALSE(message.array("absent", true));
}

TEST(ProtoJsonMessage, BytesAreStrictBase64AndChildrenCarryTheirPath) {
  const json value = {{"inner", {{"rawBytes", "aGk="}, {"bad", "aGk"}}}};
  const ProtoJsonMessage root(value, "bundle");
  const ProtoJsonMessage inner = root.child(*root.get("inner"), "inner");
  EXPECT_EQ(inner.bytes("rawBytes").value(), "hi");
  const auto bad = inner.bytes("bad");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("\"bundle.inner.bad\": ", 0), 0u);
}
