// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ATen/core/Tensor.h>

// Each op writes f(input) into `out`, elementwise, computed at the input's op-math precision
// (float for half and bfloat16) and rounded once.
// gelu: x * Phi(x), Phi the standard normal CDF (torch.nn.functional.gelu).
void gelu_cpu(at::Tensor& out, const at::Tensor& input);
// gelu_tanh: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
void gelu_tanh_cpu(at::Tensor& out, const at::Tensor& input);
// quick_gelu: x * sigmoid(1.702 * x).
void quick_gelu_cpu(at::Tensor& out, const at::Tensor& input);
// silu: x * sigmoid(x).
void silu_cpu(at::Tensor& out, const at::Tensor& input);
