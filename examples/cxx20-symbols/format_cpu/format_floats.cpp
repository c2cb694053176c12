// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <charconv>
#include <memory_resource>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

// The shortest decimal text of each element that reads back as the same double: what
// std::to_chars(double) computes, and what Python's repr(float) computes too.
std::vector<std::string> format_floats(const at::Tensor& input) {
  TORCH_CHECK(input.device().is_cpu(), "format_floats: input must be a CPU tensor");
  const auto values = input.to(at::kDouble).contiguous();
  const auto* data = values.const_data_ptr<double>();
  const auto count = values.numel();

  // The characters of all elements, carved from one arena: one allocation for the batch.
  std::array<std::byte, 4096> initial;
  std::pmr::monotonic_buffer_resource arena(initial.data(), initial.size());
  std::pmr::vector<std::pmr::string> texts(&arena);
  texts.reserve(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    std::array<char, 32> buffer;  // the shortest form of a double fits in 24 characters
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), data[i]);
    TORCH_CHECK(result.ec == std::errc(), "format_floats: to_chars failed");
    texts.emplace_back(buffer.data(), result.ptr);
  }
  return std::vector<std::string>(texts.begin(), texts.end());
}
