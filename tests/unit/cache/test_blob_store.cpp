// SPDX-License-Identifier: Apache-2.0
#include <atomic>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "cache_test_support.hpp"
#include <kernelhub/cache/blob_store.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {
namespace {

namespace fs = std::filesystem;
using testing::k_hello_sha1;
using testing::kernel_ref;

// A fetcher that appends what is missing of `content` to the partial file, as a Range
// download does, and counts its calls and the offsets it resumed from.
struct FakeFetch {
  std::string content;
  std::atomic<int> calls{0};
  std::atomic<std::uint64_t> resumed_from{0};

  BlobFetcher fetcher() {
    return [this](const fs::path& partial) -> util::Expected<void> {
      ++calls;
      const auto have = fs::file_size(partial);
      resumed_from = have;
      auto current = *util::read_file(partial);
      return util::write_file_atomic(partial, current + content.substr(have));
    };
  }
};

TEST(BlobStore, DownloadsVerifiesAndRenames) {
  const RepoCache cache("hub", kernel_ref());
  FakeFetch fetch{"hello\n"};
  const auto outcome = ensure_blob(cache, {k_hello_sha1, 6}, fetch.fetcher());
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(*outcome, BlobOutcome::downloaded);
  EXPECT_EQ(*util::read_file(cache.blob_path(k_hello_sha1)), "hello\n");
  EXPECT_FALSE(fs::exists(cache.partial_blob_path(k_hello_sha1)));
  // Second time: no fetch.
  EXPECT_EQ(*ensure_blob(cache, {k_hello_sha1, 6}, fetch.fetcher()), BlobOutcome::cached);
  EXPECT_EQ(fetch.calls.load(), 1);
}

TEST(BlobStore, ResumesFromAPartialFileLeftByAnEarlierRun) {
  const RepoCache cache("hub", kernel_ref());
  fs::create_directories(cache.blob_path(k_hello_sha1).parent_path());
  ASSERT_TRUE(util::write_file_atomic(cache.partial_blob_path(k_hello_sha1), "hel"));
  FakeFetch fetch{"hello\n"};
  ASSERT_TRUE(ensure_blob(cache, {k_hello_sha1, 6}, fetch.fetcher()));
  EXPECT_EQ(fetch.resumed_from.load(), 3u);
  EXPECT_EQ(*util::read_file(cache.blob_path(k_hello_sha1)), "hello\n");
}

TEST(BlobStore, WrongBytesNeverReachTheFinalName) {
  const RepoCache cache("hub", kernel_ref());
  FakeFetch wrong{"HELLO\n"};
  const auto outcome = ensure_blob(cache, {k_hello_sha1, 6}, wrong.fetcher());
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message.find("do not match the etag"), std::string::npos);
  EXPECT_FALSE(fs::exists(cache.blob_path(k_hello_sha1)));
  EXPECT_FALSE(fs::exists(cache.partial_blob_path(k_hello_sha1)));
}

TEST(BlobStore, AShortTransferStaysPartialForTheNextRun) {
  const RepoCache cache("hub", kernel_ref());
  const BlobFetcher interrupted = [](const fs::path& partial) -> util::Expected<void> {
    (void)util::write_file_atomic(partial, "hel");
    return util::fail("connection reset");
  };
  const auto outcome = ensure_blob(cache, {k_hello_sha1, 6}, interrupted);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().message, "connection reset");
  EXPECT_FALSE(fs::exists(cache.blob_path(k_hello_sha1)));
  EXPECT_EQ(*util::read_file(cache.partial_blob_path(k_hello_sha1)), "hel");
}

TEST(BlobStore, AnOversizedLeftoverIsDiscarded) {
  const RepoCache cache("hub", kernel_ref());
  fs::create_directories(cache.blob_path(k_hello_sha1).parent_path());
  ASSERT_TRUE(util::write_file_atomic(cache.partial_blob_path(k_hello_sha1), "hello\nand more"));
  FakeFetch fetch{"hello\n"};
  ASSERT_TRUE(ensure_blob(cache, {k_hello_sha1, 6}, fetch.fetcher()));
  EXPECT_EQ(fetch.resumed_from.load(), 0u);
}

TEST(BlobStore, TwoThreadsFetchOneBlobOnce) {
  const RepoCache cache("hub", kernel_ref());
  FakeFetch fetch{"hello\n"};
  std::atomic<int> downloaded{0};
  const auto worker = [&] {
    const auto outcome = ensure_blob(cache, {k_hello_sha1, 6}, fetch.fetcher());
    ASSERT_TRUE(outcome);
    downloaded += *outcome == BlobOutcome::downloaded ? 1 : 0;
  };
  std::thread a(worker);
  std::thread b(worker);
  a.join();
  b.join();
  EXPECT_EQ(fetch.calls.load(), 1);
  EXPECT_EQ(downloaded.load(), 1);
}

TEST(BlobStore, NamesThatAreNotContentHashesAreCheckedBySizeOnly) {
  const RepoCache cache("hub", kernel_ref());
  FakeFetch fetch{"abc"};
  ASSERT_TRUE(ensure_blob(cache, {"opaque-etag", 3}, fetch.fetcher()));
  EXPECT_FALSE(ensure_blob(cache, {"../x", 3}, fetch.fetcher()));
  // sha256 of "abc".
  EXPECT_TRUE(*blob_matches_etag(cache.blob_path("opaque-etag"),
                                 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
}

}  // namespace
}  // namespace kernelhub::cache
