// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "../torch-ext/torch_binding.h"

namespace {

// Applies `f` (taking and returning the op-math type) to every element of `input`.
template <typename F>
void unary(const char* name, at::Tensor& out, const at::Tensor& input, F f) {
  TORCH_CHECK(input.device().is_cpu(), name, ": input must be a CPU tensor");
  TORCH_CHECK(out.device() == input.device(), name, ": out must be on the input's device");
  TORCH_CHECK(out.sizes() == input.sizes() && out.scalar_type() == input.scalar_type(), name,
              ": out must match the input in shape and dtype, got ", out.sizes(), " ",
              out.scalar_type(), " for ", input.sizes(), " ", input.scalar_type());
  TORCH_CHECK(out.is_contiguous() && input.is_contiguous(), name,
              ": tensors must be contiguous");
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "unary", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const auto* in = input.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    at::parallel_for(0, input.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        result[i] = static_cast<scalar_t>(f(static_cast<acc_t>(in[i])));
      }
    });
  });
}

}  // namespace

void gelu_cpu(at::Tensor& out, const at::Tensor& input) {
  unary("gelu", out, input, [](auto x) {
    using T = decltype(x);
    return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(M_SQRT1_2)));
  });
}

void gelu_tanh_cpu(at::Tensor& out, const at::Tensor& input) {
  unary("gelu_tanh", out, input, [](auto x) {
    using T = decltype(x);
    const T inner = static_cast<T>(M_2_SQRTPI * M_SQRT1_2) * (x + T(0.044715) * x * x * x);
    return T(0.5) * x * (T(1) + std::tanh(inner));
  });
}

void quick_gelu_cpu(at::Tensor& out, const at::Tensor& input) {
  unary("quick_gelu", out, input, [](auto x) {
    using T = decltype(x);
    return x / (T(1) + std::exp(T(-1.702) * x));
  });
}

void silu_cpu(at::Tensor& out, const at::Tensor& input) {
  unary("silu", out, input, [](auto x) {
    using T = decltype(x);
    return x / (T(1) + std::exp(-x));
  });
}
