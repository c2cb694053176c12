// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <csetjmp>
#include <csignal>
#include <cstddef>
#include <ctime>

struct cmark_mem;

// Bounds on what one Markdown rendering may cost the server (issue 20 item 1). cmark-gfm
// 0.29.0.gfm.6, Debian's, turns small inputs into huge outputs (a table pads every row to its
// header's width; a link reference is copied into every use of it) and has inputs that take
// quadratic time; when an allocation fails it aborts the whole process. A MarkdownBudget gives
// it an allocator that counts every byte it holds against a limit and a CPU-time limit on the
// rendering thread; past either, the rendering is abandoned where it stands and everything it
// allocated is freed, so no input can take more than the budget or stop the server.
//
// Abandoning works by jumping (siglongjmp) from the allocator, or from the CPU timer's signal
// handler when the timer fires inside cmark-gfm's own code, back to run(): cmark-gfm is C, it
// holds no lock and every byte it owns came from this allocator, so nothing is left behind.
// The function given to run() must keep no C++ object with a destructor alive while it calls
// into cmark-gfm (the jump would skip it).
namespace kernelhub::server::web {

struct BudgetLimits {
  std::size_t max_bytes = std::size_t{64} << 20;
  std::chrono::milliseconds max_cpu{2000};
};

class MarkdownBudget {
 public:
  enum class Outcome { finished, out_of_memory, out_of_time, no_timer };

  explicit MarkdownBudget(BudgetLimits limits);
  // Frees every block still held (all of them when the work was abandoned).
  ~MarkdownBudget();
  MarkdownBudget(const MarkdownBudget&) = delete;
  MarkdownBudget& operator=(const MarkdownBudget&) = delete;

  // The allocator to hand cmark-gfm (cmark_parser_new_with_mem); usable only inside run().
  cmark_mem* memory();

  // Runs `work(context)` under the limits on the calling thread. One run per budget.
  Outcome run(void (*work)(void*), void* context);

  // The most bytes held at once, headers included.
  std::size_t peak_bytes() const { return m_peak; }

  // Internal to markdown_budget.cpp (the allocator and the signal handler reach them).
  struct Block;
  void* allocate(std::size_t bytes, bool zero);
  void* reallocate(void* pointer, std::size_t bytes);
  void release(void* pointer);
  [[noreturn]] void stop(Outcome why);
  void on_timer(void* interrupted_pc);

 private:
  BudgetLimits m_limits;
  Block* m_blocks = nullptr;
  std::size_t m_held = 0;
  std::size_t m_peak = 0;
  sigjmp_buf m_jump{};
  // Set and read by the signal handler of this thread.
  volatile std::sig_atomic_t m_running = 0;
  volatile std::sig_atomic_t m_in_allocator = 0;
  volatile std::sig_atomic_t m_expired = 0;
  volatile std::sig_atomic_t m_stop_reason = 0;
  timer_t m_timer{};
};

}  // namespace kernelhub::server::web
