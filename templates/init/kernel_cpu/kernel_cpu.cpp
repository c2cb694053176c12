#include <cmath>
#include <cstdint>

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

// The dtypes every backend of this kernel supports; others fail with a clear message.
#define DISPATCH_SUPPORTED_TYPES(TYPE, NAME, ...)              \
  AT_DISPATCH_SWITCH(TYPE, NAME,                               \
      AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__)     \
      AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__)      \
      AT_DISPATCH_CASE(at::ScalarType::BFloat16, __VA_ARGS__))

namespace {

// Elements per task of at::parallel_for: large enough that scheduling costs stay small.
constexpr int64_t k_grain_size = 4096;

template <typename scalar_t>
void silu(scalar_t *out, scalar_t const *input, int64_t count) {
  at::parallel_for(0, count, k_grain_size, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // Half-precision inputs are computed in float, as PyTorch's own kernels do.
      const float x = static_cast<float>(input[i]);
      out[i] = static_cast<scalar_t>(x / (1.0f + std::exp(-x)));
    }
  });
}

}  // namespace

void {{ kernel_name_normalized }}(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.device().is_cpu(), "{{ kernel_name_normalized }}: input must be a CPU tensor, got ",
              input.device());
  TORCH_CHECK(out.device() == input.device(), "{{ kernel_name_normalized }}: out is on ", out.device(),
              " but input is on ", input.device());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "{{ kernel_name_normalized }}: out has dtype ",
              out.scalar_type(), " but input has ", input.scalar_type());
  TORCH_CHECK(out.sizes() == input.sizes(), "{{ kernel_name_normalized }}: out has shape ", out.sizes(),
              " but input has ", input.sizes());
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
              "{{ kernel_name_normalized }}: input and out must be contiguous");

  DISPATCH_SUPPORTED_TYPES(input.scalar_type(), "{{ kernel_name_normalized }}_cpu", [&] {
    silu(out.data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>(), input.numel());
  });
}
