// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <torch/csrc/stable/tensor.h>

// out = max(input, 0), elementwise; both contiguous CPU tensors of one floating dtype.
void relu(torch::stable::Tensor out, torch::stable::Tensor input);
