// SPDX-License-Identifier: Apache-2.0
// The allocator and CPU limit cmark-gfm renders under: work past either is abandoned where it
// stands and every block it held is freed.
#include <kernelhub/server/web/markdown_budget.hpp>

#include <gtest/gtest.h>

#include <cmark-gfm.h>

namespace kernelhub::server::web {

namespace {

struct Counter {
  cmark_mem* memory;
  std::size_t allocations = 0;
};

void allocate_forever(void* data) {
  auto& counter = *static_cast<Counter*>(data);
  for (;;) {
    counter.memory->calloc(1, 1000);
    ++counter.allocations;
  }
}

void churn_forever(void* data) {
  auto& counter = *static_cast<Counter*>(data);
  for (;;) {
    void* block = counter.memory->calloc(1, 64);
    block = counter.memory->realloc(block, 128);
    counter.memory->free(block);
    ++counter.allocations;
  }
}

void grow_and_shrink(void* data) {
  auto& counter = *static_cast<Counter*>(data);
  void* block = counter.memory->calloc(10, 100);
  block = counter.memory->realloc(block, 100000);
  block = counter.memory->realloc(block, 10);
  void* other = counter.memory->realloc(nullptr, 50);
  counter.memory->free(block);
  counter.memory->free(nullptr);
  (void)other;  // left for the budget to free
  counter.allocations = 3;
}

TEST(MarkdownBudget, AllocationsPastTheLimitAbandonTheWork) {
  MarkdownBudget budget({std::size_t{1} << 20, std::chrono::milliseconds(60000)});
  Counter counter{budget.memory()};
  EXPECT_EQ(budget.run(allocate_forever, &counter), MarkdownBudget::Outcome::out_of_memory);
  EXPECT_GT(counter.allocations, 900u);
  EXPECT_LT(counter.allocations, 1100u);
  EXPECT_LE(budget.peak_bytes(), std::size_t{1} << 20);
}

TEST(MarkdownBudget, WorkThatOutlastsTheCpuLimitIsStopped) {
  // Held memory stays small, so only the CPU limit can end it.
  MarkdownBudget budget({std::size_t{1} << 20, std::chrono::milliseconds(50)});
  Counter counter{budget.memory()};
  EXPECT_EQ(budget.run(churn_forever, &counter), MarkdownBudget::Outcome::out_of_time);
  EXPECT_GT(counter.allocations, 0u);
  EXPECT_LE(budget.peak_bytes(), 1024u);
}

TEST(MarkdownBudget, FinishedWorkKeepsItsBlocksUntilTheBudgetGoes) {
  MarkdownBudget budget({std::size_t{1} << 20, std::chrono::milliseconds(60000)});
  Counter counter{budget.memory()};
  EXPECT_EQ(budget.run(grow_and_shrink, &counter), MarkdownBudget::Outcome::finished);
  EXPECT_EQ(counter.allocations, 3u);
  EXPECT_GE(budget.peak_bytes(), 100000u);
  EXPECT_LT(budget.peak_bytes(), 100200u);
}

TEST(MarkdownBudget, AnOversizedRequestIsRefusedNotAttempted) {
  MarkdownBudget budget({std::size_t{1} << 20, std::chrono::milliseconds(60000)});
  struct Job {
    cmark_mem* memory;
  } job{budget.memory()};
  const auto huge = [](void* data) {
    static_cast<Job*>(data)->memory->calloc(SIZE_MAX / 2, 4);  // overflows size_t
  };
  EXPECT_EQ(budget.run(huge, &job), MarkdownBudget::Outcome::out_of_memory);
  EXPECT_EQ(budget.peak_bytes(), 0u);
}

}  // namespace

}  // namespace kernelhub::server::web
