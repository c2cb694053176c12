// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/progress_bar.hpp>

#include <algorithm>
#include <array>
#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace kernelhub::hub {

ProgressBar::ProgressBar(std::string label, bool enabled)
    : m_label(std::move(label)), m_enabled(enabled && isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::add_total(std::uint64_t bytes) {
  m_total += bytes;
  draw(false);
}

void ProgressBar::add_done(std::uint64_t bytes) {
  m_done += bytes;
  draw(false);
}

void ProgressBar::finish() {
  if (!m_enabled) {
    return;
  }
  std::lock_guard lock(m_mutex);
  if (m_finished) {
    return;
  }
  m_finished = true;
  fmt::print(stderr, "\r{} {}\n", m_label, render(m_done, m_total, 30));
}

std::string ProgressBar::format_bytes(std::uint64_t bytes) {
  constexpr std::array k_units = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < k_units.size()) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, k_units[unit]);
}

std::string ProgressBar::render(std::uint64_t done, std::uint64_t total, int width) {
  const double fraction =
      total == 0 ? 0.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  const int filled = static_cast<int>(fraction * width);
  return fmt::format("[{}{}] {:3}%  {} / {}", std::string(static_cast<std::size_t>(filled), '#'),
                     std::string(static_cast<std::size_t>(width - filled), ' '),
                     static_cast<int>(fraction * 100), format_bytes(done), format_bytes(total));
}

void ProgressBar::draw(bool force) {
  if (!m_enabled) {
    return;
  }
  std::lock_guard lock(m_mutex);
  const auto now = std::chrono::steady_clock::now();
  if (m_finished || (!force && now - m_last_draw < std::chrono::milliseconds(100))) {
    return;
  }
  m_last_draw = now;
  fmt::print(stderr, "\r{} {}", m_label, render(m_done, m_total, 30));
  std::fflush(stderr);
}

}  // namespace kernelhub::hub
