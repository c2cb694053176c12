#include <metal_stdlib>

using namespace metal;

// Half-precision inputs are computed in float, as PyTorch's own kernels do. precise::exp
// keeps float32 results as accurate as PyTorch's, which Metal's default fast math would not.
template <typename T>
inline T silu(T value) {
  const float x = static_cast<float>(value);
  return static_cast<T>(x / (1.0f + precise::exp(-x)));
}

// One kernel per dtype; the host code picks it by name.
kernel void {{ kernel_name_normalized }}_float(device const float *input [[buffer(0)]],
                         device float *out [[buffer(1)]],
                         constant uint &count [[buffer(2)]],
                         uint index [[thread_position_in_grid]]) {
  if (index < count) {
    out[index] = silu(input[index]);
  }
}

kernel void {{ kernel_name_normalized }}_half(device const half *input [[buffer(0)]],
                        device half *out [[buffer(1)]],
                        constant uint &count [[buffer(2)]],
                        uint index [[thread_position_in_grid]]) {
  if (index < count) {
    out[index] = silu(input[index]);
  }
}

kernel void {{ kernel_name_normalized }}_bfloat(device const bfloat *input [[buffer(0)]],
                          device bfloat *out [[buffer(1)]],
                          constant uint &count [[buffer(2)]],
                          uint index [[thread_position_in_grid]]) {
  if (index < count) {
    out[index] = silu(input[index]);
  }
}
