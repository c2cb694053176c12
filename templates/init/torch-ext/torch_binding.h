#pragma once

// Lean ATen headers keep compiles fast; <torch/torch.h> also works, at several times the
// compile time of every file that includes it.
#include <ATen/core/Tensor.h>

// Writes SiLU(input) into `out`. Each backend's source defines this function; a build
// compiles exactly one of them.
void {{ kernel_name_normalized }}(at::Tensor &out, at::Tensor const &input);
