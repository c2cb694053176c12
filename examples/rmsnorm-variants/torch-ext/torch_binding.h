// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include <ATen/core/Tensor.h>

// Both normalize each row of `input` over its last dimension, n = x / sqrt(mean(x^2) + eps), at
// the input's op-math precision (float for half and bfloat16), and round once into `out`.
// out, input, gate and weight share one dtype; weight is 1-d with the last dimension's size.

// out = weight * n * act(gate), act "silu" or "sigmoid"; gate has the input's shape.
void rms_norm_gated_cpu(at::Tensor& out, const at::Tensor& input, const at::Tensor& gate,
                        const at::Tensor& weight, double eps, std::string_view activation);
// out = n * (1 + weight).
void rms_norm_zero_centered_cpu(at::Tensor& out, const at::Tensor& input,
                                const at::Tensor& weight, double eps);
