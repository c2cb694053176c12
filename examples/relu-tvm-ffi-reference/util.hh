// SPDX-License-Identifier: Apache-2.0
// The argument checks every backend's relu shares: out and input of one dtype and size, on one
// device, laid out contiguously.
#pragma once

#include <cstdint>

#include <tvm/ffi/tvm_ffi.h>

namespace relu_tvm_ffi {

constexpr DLDataType k_float32{kDLFloat, 32, 1};

inline bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// Throws ValueError/TypeError naming what is wrong; `device` is the backend's device type.
inline void check_arguments(tvm::ffi::TensorView out, tvm::ffi::TensorView input,
                            DLDeviceType device) {
  if (input.device().device_type != device || out.device().device_type != device) {
    TVM_FFI_THROW(ValueError) << "relu: input and out must be on device type " << device
                              << ", got " << input.device().device_type << " and "
                              << out.device().device_type;
  }
  if (input.device().device_id != out.device().device_id) {
    TVM_FFI_THROW(ValueError) << "relu: input and out are on different devices";
  }
  if (!same_dtype(input.dtype(), out.dtype())) {
    TVM_FFI_THROW(ValueError) << "relu: input is " << input.dtype() << " but out is "
                              << out.dtype();
  }
  if (!same_dtype(input.dtype(), k_float32)) {
    TVM_FFI_THROW(TypeError) << "relu: unsupported dtype " << input.dtype()
                             << " (float32 only)";
  }
  if (input.numel() != out.numel()) {
    TVM_FFI_THROW(ValueError) << "relu: input has " << input.numel() << " elements, out has "
                              << out.numel();
  }
  if (!input.IsContiguous() || !out.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "relu: input and out must be contiguous";
  }
}

// The first element: a DLPack tensor may start `byte_offset` bytes into its data.
inline float* first_float(tvm::ffi::TensorView tensor) {
  return reinterpret_cast<float*>(static_cast<char*>(tensor.data_ptr()) + tensor.byte_offset());
}

}  // namespace relu_tvm_ffi
