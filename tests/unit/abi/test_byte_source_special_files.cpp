// SPDX-License-Identifier: Apache-2.0
// check-abi opens a FIFO without waiting for a writer and refuses it (issue 12, item 13).
#include <kernelhub/abi/byte_source.hpp>

#include <gtest/gtest.h>

#include "../util/fifo_guard.hpp"

namespace kernelhub::abi {
namespace {

TEST(ByteSourceSpecialFiles, AFifoIsRefusedWithoutBlocking) {
  const auto fifo = kernelhub::testing::make_fifo("libfifo.so");
  bool blocked = false;
  const auto source = kernelhub::testing::call_with_fifo_unblocker(
      fifo, [&] { return FileByteSource::open(fifo); }, blocked);
  EXPECT_FALSE(blocked) << "open waited for a writer";
  ASSERT_FALSE(source);
  EXPECT_NE(source.error().message.find("FIFO"), std::string::npos) << source.error().message;
}

}  // namespace
}  // namespace kernelhub::abi
