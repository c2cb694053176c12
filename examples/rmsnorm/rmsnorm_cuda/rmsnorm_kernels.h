// SPDX-License-Identifier: Apache-2.0
#pragma once

// The launchers the torch glue (rmsnorm_cuda.cpp) calls. No torch type appears here, so the
// .cu file that implements them compiles without torch's headers.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace rmsnorm {

enum class ElementType { float32, float64, float16, bfloat16 };

// `rows` rows of `hidden` contiguous elements each; returns the launch's error.
cudaError_t launch_rms_norm(ElementType type, void* out, const void* input, const void* weight,
                            int64_t rows, int64_t hidden, double eps, cudaStream_t stream);

cudaError_t launch_silu(ElementType type, void* out, const void* input, int64_t n,
                        cudaStream_t stream);

}  // namespace rmsnorm
