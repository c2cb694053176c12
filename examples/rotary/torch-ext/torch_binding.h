// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ATen/core/Tensor.h>

// Rotary position embedding of `x` (contiguous, last dimension D even, split in halves x1, x2):
//   out = x * cos + rotate(x) * sin, rotate(x) = (-x2, x1), or (x2, -x1) when `reverse`.
// `cos` and `sin` have x's sizes except the last dimension, any strides (a broadcast view has
// stride 0), and a last dimension of D or D/2; with D/2 both halves of x use the same values.
// Computed at x's op-math precision, rounded once.
void apply_rotary_cpu(at::Tensor& out, const at::Tensor& x, const at::Tensor& cos,
                      const at::Tensor& sin, bool reverse);
