// The functions this kernel exports through tvm-ffi: each variant compiles only its own
// backend's implementation, so `ops` has relu_cpu in the cpu variant and relu_cuda in the
// cuda one.
#include <tvm/ffi/tvm_ffi.h>

#if defined(CPU_KERNEL)
void relu_cpu(tvm::ffi::TensorView out, tvm::ffi::TensorView input);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu_cpu, relu_cpu);
#endif

#if defined(CUDA_KERNEL)
void relu_cuda(tvm::ffi::TensorView out, tvm::ffi::TensorView input);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu_cuda, relu_cuda);
#endif
