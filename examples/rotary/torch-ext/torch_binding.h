// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ATen/core/Tensor.h>

// Rotary position embedding of `x` (contiguous, last dimension D even):
//   out = x * cos + rotate(x) * sin
// where x's dimensions pair up as halves, (x[i], x[i + D/2]), or when `interleaved` as
// neighbours, (x[2i], x[2i + 1]), and rotate(x) maps each pair (a, b) to (-b, a), or to (b, -a)
// when `reverse`. `cos` and `sin` have x's sizes except the last dimension, any strides (a
// broadcast view has stride 0), and a last dimension of D, or of D/2 with one value per pair.
// Computed at x's op-math precision, rounded once.
void apply_rotary_cpu(at::Tensor& out, const at::Tensor& x, const at::Tensor& cos,
                      const at::Tensor& sin, bool interleaved, bool reverse);
