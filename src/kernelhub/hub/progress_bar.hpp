// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

// One line of download progress on stderr, redrawn at most ten times a second. It draws
// nothing unless stderr is a terminal, so logs and pipes stay clean.
namespace kernelhub::hub {

class ProgressBar {
public:
  // `enabled` false (or stderr not a TTY) makes every call a no-op.
  ProgressBar(std::string label, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void add_total(std::uint64_t bytes);
  void add_done(std::uint64_t bytes);
  void finish();

  // "12.3 MiB"
  static std::string format_bytes(std::uint64_t bytes);
  // "[#####     ] 50%  1.0 MiB / 2.0 MiB" for a given width of the bar.
  static std::string render(std::uint64_t done, std::uint64_t total, int width);

private:
  void draw(bool force);

  std::string m_label;
  bool m_enabled;
  bool m_finished = false;
  std::atomic<std::uint64_t> m_total{0};
  std::atomic<std::uint64_t> m_done{0};
  std::mutex m_mutex;
  std::chrono::steady_clock::time_point m_last_draw{};
};

}  // namespace kernelhub::hub
