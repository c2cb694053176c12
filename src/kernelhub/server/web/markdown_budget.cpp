// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/markdown_budget.hpp>

#include <link.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <cmark-gfm.h>

namespace kernelhub::server::web {

// Every block cmark-gfm holds starts with this header: a list of them is what is freed when
// a rendering is abandoned, and their sizes are what the budget counts.
struct alignas(16) MarkdownBudget::Block {
  Block* previous;
  Block* next;
  std::size_t size;
};

namespace {

thread_local MarkdownBudget* t_active = nullptr;

// A real-time signal no library here uses (glibc keeps the two below SIGRTMIN for itself).
int timer_signal() { return SIGRTMIN + 7; }

struct CodeRange {
  std::uintptr_t begin;
  std::uintptr_t end;
};

// The executable segments of cmark-gfm's shared libraries. The timer abandons a rendering at
// once only when it interrupts this code; anywhere else (libc's malloc, called through this
// allocator, or qsort's, called by cmark-gfm) a lock may be held, so it only marks the budget
// spent and the allocator stops at its next call. A cmark-gfm linked statically is not found
// here: then only the allocator stops it.
const std::vector<CodeRange>& cmark_code() {
  static const std::vector<CodeRange> ranges = [] {
    std::vector<CodeRange> found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
          auto& out = *static_cast<std::vector<CodeRange>*>(data);
          if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libcmark-gfm") == nullptr) {
            return 0;
          }
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr)& header = info->dlpi_phdr[i];
            if (header.p_type == PT_LOAD && (header.p_flags & PF_X) != 0) {
              const std::uintptr_t begin = info->dlpi_addr + header.p_vaddr;
              out.push_back({begin, begin + header.p_memsz});
            }
          }
          return 0;
        },
        &found);
    return found;
  }();
  return ranges;
}

bool in_cmark_code(const void* pc) {
  const auto at = reinterpret_cast<std::uintptr_t>(pc);
  for (const CodeRange& range : cmark_code()) {
    if (at >= range.begin && at < range.end) {
      return true;
    }
  }
  return false;
}

void on_timer_signal(int /*signal*/, siginfo_t* /*info*/, void* context) {
  MarkdownBudget* budget = t_active;
  if (budget == nullptr) {
    return;
  }
  const auto* machine = static_cast<const ucontext_t*>(context);
  const void* pc = nullptr;
#if defined(__x86_64__)
  pc = reinterpret_cast<const void*>(machine->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  pc = reinterpret_cast<const void*>(machine->uc_mcontext.pc);
#else
  (void)machine;
#endif
  budget->on_timer(const_cast<void*>(pc));
}

void install_handler() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    (void)cmark_code();  // filled before any handler can read it
    struct sigaction action {};
    action.sa_sigaction = on_timer_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(timer_signal(), &action, nullptr);
  });
}

void* budget_calloc(std::size_t count, std::size_t size) {
  if (size != 0 && count > SIZE_MAX / size) {
    t_active->stop(MarkdownBudget::Outcome::out_of_memory);
  }
  return t_active->allocate(count * size, true);
}

void* budget_realloc(void* pointer, std::size_t size) {
  return t_active->reallocate(pointer, size);
}

void budget_free(void* pointer) { t_active->release(pointer); }

cmark_mem k_budget_memory{budget_calloc, budget_realloc, budget_free};

void arm(timer_t timer, std::chrono::nanoseconds after) {
  itimerspec when{};
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(after);
  when.it_value.tv_sec = static_cast<time_t>(seconds.count());
  when.it_value.tv_nsec = static_cast<long>((after - seconds).count());
  if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) {
    when.it_value.tv_nsec = 1;  // zero would disarm it
  }
  timer_settime(timer, 0, &when, nullptr);
}

}  // namespace

MarkdownBudget::MarkdownBudget(BudgetLimits limits) : m_limits(limits) {}

MarkdownBudget::~MarkdownBudget() {
  while (m_blocks != nullptr) {
    Block* next = m_blocks->next;
    std::free(m_blocks);
    m_blocks = next;
  }
}

cmark_mem* MarkdownBudget::memory() { return &k_budget_memory; }

void MarkdownBudget::stop(Outcome why) {
  m_stop_reason = static_cast<std::sig_atomic_t>(why);
  siglongjmp(m_jump, 1);
}

void* MarkdownBudget::allocate(std::size_t bytes, bool zero) {
  m_in_allocator = 1;
  if (m_expired != 0) {
    stop(Outcome::out_of_time);
  }
  const std::size_t total = sizeof(Block) + bytes;
  if (bytes > m_limits.max_bytes || total > m_limits.max_bytes - std::min(m_held, m_limits.max_bytes)) {
    stop(Outcome::out_of_memory);
  }
  void* raw = zero ? std::calloc(1, total) : std::malloc(total);
  if (raw == nullptr) {
    stop(Outcome::out_of_memory);
  }
  auto* block = static_cast<Block*>(raw);
  block->previous = nullptr;
  block->next = m_blocks;
  block->size = bytes;
  if (m_blocks != nullptr) {
    m_blocks->previous = block;
  }
  m_blocks = block;
  m_held += total;
  m_peak = std::max(m_peak, m_held);
  m_in_allocator = 0;
  return block + 1;
}

void* MarkdownBudget::reallocate(void* pointer, std::size_t bytes) {
  if (pointer == nullptr) {
    return allocate(bytes, false);
  }
  m_in_allocator = 1;
  if (m_expired != 0) {
    stop(Outcome::out_of_time);
  }
  Block* block = static_cast<Block*>(pointer) - 1;
  const std::size_t old_size = block->size;
  if (bytes > old_size) {
    const std::size_t growth = bytes - old_size;
    if (growth > m_limits.max_bytes || m_held + growth > m_limits.max_bytes) {
      stop(Outcome::out_of_memory);
    }
  }
  // On failure std::realloc leaves the old block as it was: still listed, freed with the rest.
  void* raw = std::realloc(block, sizeof(Block) + bytes);
  if (raw == nullptr) {
    stop(Outcome::out_of_memory);
  }
  block = static_cast<Block*>(raw);
  if (block->previous != nullptr) {
    block->previous->next = block;
  } else {
    m_blocks = block;
  }
  if (block->next != nullptr) {
    block->next->previous = block;
  }
  block->size = bytes;
  m_held = m_held - old_size + bytes;
  m_peak = std::max(m_peak, m_held);
  m_in_allocator = 0;
  return block + 1;
}

void MarkdownBudget::release(void* pointer) {
  if (pointer == nullptr) {
    return;
  }
  m_in_allocator = 1;
  Block* block = static_cast<Block*>(pointer) - 1;
  if (block->previous != nullptr) {
    block->previous->next = block->next;
  } else {
    m_blocks = block->next;
  }
  if (block->next != nullptr) {
    block->next->previous = block->previous;
  }
  m_held -= sizeof(Block) + block->size;
  std::free(block);
  m_in_allocator = 0;
}

void MarkdownBudget::on_timer(void* interrupted_pc) {
  if (m_running == 0) {
    return;  // a signal left over from a run that has finished
  }
  m_expired = 1;
  if (m_in_allocator == 0 && in_cmark_code(interrupted_pc)) {
    stop(Outcome::out_of_time);
  }
  // Not in cmark-gfm's code: the allocator stops it at its next call, and the timer looks
  // again shortly in case no allocation comes.
  arm(m_timer, std::chrono::milliseconds(1));
}

MarkdownBudget::Outcome MarkdownBudget::run(void (*work)(void*), void* context) {
  install_handler();
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = timer_signal();
  // syscall rather than gettid(3), which glibc has only since 2.30 (the wheel runs on 2.28).
  event._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &m_timer) != 0) {
    return Outcome::no_timer;
  }
  MarkdownBudget* const previous = t_active;
  t_active = this;
  m_stop_reason = static_cast<std::sig_atomic_t>(Outcome::finished);
  // sigsetjmp saves the signal mask, so a jump out of the handler unblocks the signal again.
  if (sigsetjmp(m_jump, 1) == 0) {
    m_running = 1;
    arm(m_timer, m_limits.max_cpu);
    work(context);
  }
  m_running = 0;
  m_in_allocator = 0;
  timer_delete(m_timer);
  t_active = previous;
  return static_cast<Outcome>(m_stop_reason);
}

}  // namespace kernelhub::server::web
