// SPDX-License-Identifier: Apache-2.0
// The functions the kernel exports through tvm-ffi. Each variant compiles its own backend's
// implementation only (the builder defines CPU_KERNEL, CUDA_KERNEL or XPU_KERNEL), so `ops`
// has relu_cpu in the cpu variant, relu_cuda in the cuda one.
#include <tvm/ffi/tvm_ffi.h>

#if defined(CPU_KERNEL)
void relu_cpu(tvm::ffi::TensorView out, tvm::ffi::TensorView input);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu_cpu, relu_cpu);
#endif

#if defined(CUDA_KERNEL)
void relu_cuda(tvm::ffi::TensorView out, tvm::ffi::TensorView input);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu_cuda, relu_cuda);
#endif

#if defined(XPU_KERNEL)
void relu_xpu(tvm::ffi::TensorView out, tvm::ffi::TensorView input);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu_xpu, relu_xpu);
#endif
