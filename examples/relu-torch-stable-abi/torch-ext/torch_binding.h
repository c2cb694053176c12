// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <torch/csrc/stable/tensor.h>

// out = max(input, 0), elementwise; one definition per backend source.
void relu(torch::stable::Tensor out, torch::stable::Tensor input);
