// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

#include "../torch-ext/torch_binding.h"

void rms_norm_cpu(at::Tensor& out, const at::Tensor& input, const at::Tensor& weight,
                  double eps) {
  TORCH_CHECK(input.device().is_cpu(), "rms_norm: input must be a CPU tensor");
  check_rms_norm_arguments(out, input, weight);
  const int64_t hidden = input.size(-1);
  if (input.numel() == 0) {
    return;
  }
  const int64_t rows = input.numel() / hidden;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "rms_norm_cpu",
                                  [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const auto* in = input.const_data_ptr<scalar_t>();
    const auto* w = weight.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    // Rows are independent; a grain of 16 rows keeps small inputs on one thread.
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const scalar_t* x = in + row * hidden;
        scalar_t* y = result + row * hidden;
        // Summed in double so long rows lose nothing; the mean is then taken at acc_t, the
        // precision the reference computes it in.
        double sum = 0.0;
        for (int64_t i = 0; i < hidden; ++i) {
          const double v = static_cast<acc_t>(x[i]);
          sum += v * v;
        }
        const auto variance = static_cast<acc_t>(sum / static_cast<double>(hidden));
        const acc_t inv_rms = acc_t(1) / std::sqrt(variance + static_cast<acc_t>(eps));
        for (int64_t i = 0; i < hidden; ++i) {
          const auto normalized = static_cast<scalar_t>(static_cast<acc_t>(x[i]) * inv_rms);
          y[i] = static_cast<scalar_t>(static_cast<acc_t>(w[i]) * static_cast<acc_t>(normalized));
        }
      }
    });
  });
}

void silu_cpu(at::Tensor& out, const at::Tensor& input) {
  TORCH_CHECK(input.device().is_cpu(), "silu: input must be a CPU tensor");
  check_silu_arguments(out, input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "silu_cpu", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const auto* in = input.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    at::parallel_for(0, input.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const auto v = static_cast<acc_t>(in[i]);
        result[i] = static_cast<scalar_t>(v / (acc_t(1) + std::exp(-v)));
      }
    });
  });
}
