// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "../torch-ext/torch_binding.h"

namespace {

void check_norm_arguments(const char* name, const at::Tensor& out, const at::Tensor& input,
                          const at::Tensor& weight) {
  TORCH_CHECK(input.device().is_cpu(), name, ": input must be a CPU tensor");
  TORCH_CHECK(input.dim() >= 1, name, ": input must have at least one dimension");
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == input.size(-1), name,
              ": weight must be 1-d with the size of the input's last dimension (",
              input.size(-1), "), got shape ", weight.sizes());
  TORCH_CHECK(out.sizes() == input.sizes(), name, ": out must have the input's shape");
  TORCH_CHECK(out.scalar_type() == input.scalar_type() &&
                  weight.scalar_type() == input.scalar_type(),
              name, ": out, input and weight must have one dtype, got ", out.scalar_type(), ", ",
              input.scalar_type(), " and ", weight.scalar_type());
  TORCH_CHECK(out.device() == input.device() && weight.device() == input.device(), name,
              ": out, input and weight must be on one device");
  TORCH_CHECK(out.is_contiguous() && input.is_contiguous() && weight.is_contiguous(), name,
              ": tensors must be contiguous");
}

// Calls `row_fn(row, inv_rms)` for every row of `input`, rows spread over threads.
template <typename scalar_t, typename RowFn>
void for_each_row(const at::Tensor& input, double eps, RowFn row_fn) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t hidden = input.size(-1);
  const int64_t rows = input.numel() / hidden;
  const auto* in = input.const_data_ptr<scalar_t>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const scalar_t* x = in + row * hidden;
      // Summed in double so long rows lose nothing; the mean is then taken at acc_t.
      double sum = 0.0;
      for (int64_t i = 0; i < hidden; ++i) {
        const double v = static_cast<acc_t>(x[i]);
        sum += v * v;
      }
      const auto variance = static_cast<acc_t>(sum / static_cast<double>(hidden));
      row_fn(row, acc_t(1) / std::sqrt(variance + static_cast<acc_t>(eps)));
    }
  });
}

}  // namespace

void rms_norm_gated_cpu(at::Tensor& out, const at::Tensor& input, const at::Tensor& gate,
                        const at::Tensor& weight, double eps, std::string_view activation) {
  check_norm_arguments("rms_norm_gated", out, input, weight);
  TORCH_CHECK(gate.sizes() == input.sizes() && gate.scalar_type() == input.scalar_type() &&
                  gate.device() == input.device() && gate.is_contiguous(),
              "rms_norm_gated: gate must be a contiguous tensor of the input's shape, dtype and "
              "device, got ", gate.sizes(), " ", gate.scalar_type());
  const bool silu = activation == "silu";
  TORCH_CHECK(silu || activation == "sigmoid",
              "rms_norm_gated: activation must be \"silu\" or \"sigmoid\", got \"", activation,
              "\"");
  if (input.numel() == 0) {
    return;
  }
  const int64_t hidden = input.size(-1);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(),
                                  "rms_norm_gated_cpu", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const auto* in = input.const_data_ptr<scalar_t>();
    const auto* g = gate.const_data_ptr<scalar_t>();
    const auto* w = weight.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    for_each_row<scalar_t>(input, eps, [&](int64_t row, acc_t inv_rms) {
      const int64_t base = row * hidden;
      for (int64_t i = 0; i < hidden; ++i) {
        const auto gv = static_cast<acc_t>(g[base + i]);
        const acc_t sigmoid = acc_t(1) / (acc_t(1) + std::exp(-gv));
        const acc_t act = silu ? gv * sigmoid : sigmoid;
        result[base + i] = static_cast<scalar_t>(
            static_cast<acc_t>(w[i]) * static_cast<acc_t>(in[base + i]) * inv_rms * act);
      }
    });
  });
}

void rms_norm_zero_centered_cpu(at::Tensor& out, const at::Tensor& input,
                                const at::Tensor& weight, double eps) {
  check_norm_arguments("rms_norm_zero_centered", out, input, weight);
  if (input.numel() == 0) {
    return;
  }
  const int64_t hidden = input.size(-1);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(),
                                  "rms_norm_zero_centered_cpu", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const auto* in = input.const_data_ptr<scalar_t>();
    const auto* w = weight.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    for_each_row<scalar_t>(input, eps, [&](int64_t row, acc_t inv_rms) {
      const int64_t base = row * hidden;
      for (int64_t i = 0; i < hidden; ++i) {
        result[base + i] = static_cast<scalar_t>(static_cast<acc_t>(in[base + i]) * inv_rms *
                                                 (acc_t(1) + static_cast<acc_t>(w[i])));
      }
    });
  });
}
