// The argument checks both relu implementations share: float32 tensors of the same size, on
// the same device, laid out contiguously.
#pragma once

#include <tvm/ffi/tvm_ffi.h>

namespace relu_tvm_ffi {

inline bool is_float32(DLDataType dtype) {
  return dtype.code == kDLFloat && dtype.bits == 32 && dtype.lanes == 1;
}

inline void check_arguments(tvm::ffi::TensorView out, tvm::ffi::TensorView input,
                            DLDeviceType device) {
  TVM_FFI_ICHECK(input.device().device_type == device) << "input is on the wrong device";
  TVM_FFI_ICHECK(out.device().device_type == device) << "out is on the wrong device";
  TVM_FFI_ICHECK(input.device().device_id == out.device().device_id)
      << "input and out are on different devices";
  if (!is_float32(input.dtype()) || !is_float32(out.dtype())) {
    TVM_FFI_THROW(TypeError) << "relu supports float32 only, got " << input.dtype() << " and "
                             << out.dtype();
  }
  if (input.numel() != out.numel()) {
    TVM_FFI_THROW(ValueError) << "input has " << input.numel() << " elements but out has "
                              << out.numel();
  }
  if (!input.IsContiguous() || !out.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "relu needs contiguous tensors";
  }
}

// Where the elements start (DLPack tensors may carry a byte offset).
inline float* float_data(tvm::ffi::TensorView tensor) {
  return reinterpret_cast<float*>(static_cast<char*>(tensor.data_ptr()) + tensor.byte_offset());
}

}  // namespace relu_tvm_ffi
