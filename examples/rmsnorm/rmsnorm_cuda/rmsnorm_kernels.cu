// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "rmsnorm_kernels.h"

namespace rmsnorm {

namespace {

constexpr int k_threads = 256;  // a power of two, for the tree reduction below

// The precision the arithmetic runs in: float, as transformers computes RMSNorm, and double
// for double inputs.
template <typename T>
struct Accumulate {
  using type = float;
};
template <>
struct Accumulate<double> {
  using type = double;
};

template <typename T>
__global__ void rms_norm_kernel(T* __restrict__ out, const T* __restrict__ in,
                                const T* __restrict__ weight, int64_t hidden, double eps) {
  using acc_t = typename Accumulate<T>::type;
  const T* x = in + static_cast<int64_t>(blockIdx.x) * hidden;
  T* y = out + static_cast<int64_t>(blockIdx.x) * hidden;

  acc_t sum = 0;
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    const auto v = static_cast<acc_t>(x[i]);
    sum += v * v;
  }
  __shared__ acc_t partial[k_threads];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = k_threads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    }
    __syncthreads();
  }
  const acc_t variance = partial[0] / static_cast<acc_t>(hidden);
  const acc_t inv_rms = acc_t(1) / sqrt(variance + static_cast<acc_t>(eps));
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    const auto normalized = static_cast<T>(static_cast<acc_t>(x[i]) * inv_rms);
    y[i] = static_cast<T>(static_cast<acc_t>(weight[i]) * static_cast<acc_t>(normalized));
  }
}

template <typename T>
__global__ void silu_kernel(T* __restrict__ out, const T* __restrict__ in, int64_t n) {
  using acc_t = typename Accumulate<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const auto v = static_cast<acc_t>(in[i]);
    out[i] = static_cast<T>(v / (acc_t(1) + exp(-v)));
  }
}

template <typename T>
cudaError_t rms_norm_typed(void* out, const void* input, const void* weight, int64_t rows,
                           int64_t hidden, double eps, cudaStream_t stream) {
  rms_norm_kernel<T><<<static_cast<unsigned>(rows), k_threads, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(input), static_cast<const T*>(weight), hidden,
      eps);
  return cudaGetLastError();
}

template <typename T>
cudaError_t silu_typed(void* out, const void* input, int64_t n, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((n + k_threads - 1) / k_threads);
  silu_kernel<T><<<blocks, k_threads, 0, stream>>>(static_cast<T*>(out),
                                                   static_cast<const T*>(input), n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_rms_norm(ElementType type, void* out, const void* input, const void* weight,
                            int64_t rows, int64_t hidden, double eps, cudaStream_t stream) {
  switch (type) {
    case ElementType::float32:
      return rms_norm_typed<float>(out, input, weight, rows, hidden, eps, stream);
    case ElementType::float64:
      return rms_norm_typed<double>(out, input, weight, rows, hidden, eps, stream);
    case ElementType::float16:
      return rms_norm_typed<__half>(out, input, weight, rows, hidden, eps, stream);
    case ElementType::bfloat16:
      return rms_norm_typed<__nv_bfloat16>(out, input, weight, rows, hidden, eps, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_silu(ElementType type, void* out, const void* input, int64_t n,
                        cudaStream_t stream) {
  switch (type) {
    case ElementType::float32:
      return silu_typed<float>(out, input, n, stream);
    case ElementType::float64:
      return silu_typed<double>(out, input, n, stream);
    case ElementType::float16:
      return silu_typed<__half>(out, input, n, stream);
    case ElementType::bfloat16:
      return silu_typed<__nv_bfloat16>(out, input, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace rmsnorm
