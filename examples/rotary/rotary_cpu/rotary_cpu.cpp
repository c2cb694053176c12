// SPDX-License-Identifier: Apache-2.0
#include <vector>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "../torch-ext/torch_binding.h"

namespace {

void check_arguments(const at::Tensor& out, const at::Tensor& x, const at::Tensor& cos,
                     const at::Tensor& sin) {
  TORCH_CHECK(x.device().is_cpu(), "apply_rotary: x must be a CPU tensor");
  TORCH_CHECK(out.device() == x.device() && cos.device() == x.device() &&
                  sin.device() == x.device(),
              "apply_rotary: out, x, cos and sin must be on one device");
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) % 2 == 0,
              "apply_rotary: x's last dimension must be even, got shape ", x.sizes());
  TORCH_CHECK(out.sizes() == x.sizes(), "apply_rotary: out must have x's shape");
  TORCH_CHECK(out.scalar_type() == x.scalar_type() && cos.scalar_type() == x.scalar_type() &&
                  sin.scalar_type() == x.scalar_type(),
              "apply_rotary: out, x, cos and sin must have one dtype, got ", out.scalar_type(),
              ", ", x.scalar_type(), ", ", cos.scalar_type(), " and ", sin.scalar_type());
  TORCH_CHECK(out.is_contiguous() && x.is_contiguous(),
              "apply_rotary: out and x must be contiguous");
  TORCH_CHECK(cos.sizes() == sin.sizes(), "apply_rotary: cos and sin must have one shape, got ",
              cos.sizes(), " and ", sin.sizes());
  TORCH_CHECK(cos.dim() == x.dim(), "apply_rotary: cos and sin must have x's number of "
              "dimensions (", x.dim(), "), got shape ", cos.sizes());
  for (int64_t d = 0; d + 1 < x.dim(); ++d) {
    TORCH_CHECK(cos.size(d) == x.size(d), "apply_rotary: cos and sin must have x's sizes but "
                "the last (expand them first), got ", cos.sizes(), " for x ", x.sizes());
  }
  const int64_t width = cos.size(-1);
  TORCH_CHECK(width == x.size(-1) || 2 * width == x.size(-1),
              "apply_rotary: the last dimension of cos and sin must be x's (", x.size(-1),
              ") or half of it, got ", width);
}

}  // namespace

void apply_rotary_cpu(at::Tensor& out, const at::Tensor& x, const at::Tensor& cos,
                      const at::Tensor& sin, bool interleaved, bool reverse) {
  check_arguments(out, x, cos, sin);
  if (x.numel() == 0) {
    return;
  }
  const int64_t dim = x.size(-1);
  const int64_t half = dim / 2;
  const int64_t rows = x.numel() / dim;
  const int64_t leading = x.dim() - 1;
  // A row's offset into cos/sin: its index unravelled over x's leading sizes, dotted with the
  // strides of cos (sin's, for a view of another layout).
  const std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end() - 1);
  const std::vector<int64_t> cos_strides(cos.strides().begin(), cos.strides().end() - 1);
  const std::vector<int64_t> sin_strides(sin.strides().begin(), sin.strides().end() - 1);
  const int64_t cos_step = cos.stride(-1);
  const int64_t sin_step = sin.stride(-1);
  // With a half-width cos/sin, both elements of a pair read the pair's angle.
  const bool half_width = cos.size(-1) != dim;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "apply_rotary", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const auto* in = x.const_data_ptr<scalar_t>();
    const auto* c = cos.const_data_ptr<scalar_t>();
    const auto* s = sin.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    const acc_t sign = reverse ? acc_t(-1) : acc_t(1);
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        int64_t rest = row;
        int64_t cos_offset = 0;
        int64_t sin_offset = 0;
        for (int64_t d = leading - 1; d >= 0; --d) {
          const int64_t index = rest % sizes[d];
          rest /= sizes[d];
          cos_offset += index * cos_strides[d];
          sin_offset += index * sin_strides[d];
        }
        const scalar_t* xr = in + row * dim;
        scalar_t* yr = result + row * dim;
        for (int64_t i = 0; i < dim; ++i) {
          // rotate(x)[i] is minus the pair's second element at its first, the pair's first
          // element at its second.
          acc_t rotated;
          int64_t j;
          if (interleaved) {
            rotated = i % 2 == 0 ? -static_cast<acc_t>(xr[i + 1]) : static_cast<acc_t>(xr[i - 1]);
            j = half_width ? i / 2 : i;
          } else {
            rotated = i < half ? -static_cast<acc_t>(xr[i + half])
                               : static_cast<acc_t>(xr[i - half]);
            j = half_width ? i % half : i;
          }
          const auto cv = static_cast<acc_t>(c[cos_offset + j * cos_step]);
          const auto sv = static_cast<acc_t>(s[sin_offset + j * sin_step]);
          yr[i] = static_cast<scalar_t>(static_cast<acc_t>(xr[i]) * cv + sign * rotated * sv);
        }
      }
    });
  });
}
