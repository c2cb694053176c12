#include <cstdint>

#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <c10/xpu/XPUStream.h>
#include <sycl/sycl.hpp>

// The dtypes every backend of this kernel supports; others fail with a clear message. No
// float64: several Intel GPUs have no double-precision units.
#define DISPATCH_SUPPORTED_TYPES(TYPE, NAME, ...)              \
  AT_DISPATCH_SWITCH(TYPE, NAME,                               \
      AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__)     \
      AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__)      \
      AT_DISPATCH_CASE(at::ScalarType::BFloat16, __VA_ARGS__))

void {{ kernel_name_normalized }}(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.device().is_xpu(), "{{ kernel_name_normalized }}: input must be an XPU tensor, got ",
              input.device());
  TORCH_CHECK(out.device() == input.device(), "{{ kernel_name_normalized }}: out is on ", out.device(),
              " but input is on ", input.device());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "{{ kernel_name_normalized }}: out has dtype ",
              out.scalar_type(), " but input has ", input.scalar_type());
  TORCH_CHECK(out.sizes() == input.sizes(), "{{ kernel_name_normalized }}: out has shape ", out.sizes(),
              " but input has ", input.sizes());
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
              "{{ kernel_name_normalized }}: input and out must be contiguous");

  const int64_t count = input.numel();
  if (count == 0) {
    return;
  }
  // Submit to PyTorch's current queue for the input's device, so the kernel is ordered with
  // the surrounding PyTorch work.
  sycl::queue &queue = c10::xpu::getCurrentXPUStream(input.device().index()).queue();

  DISPATCH_SUPPORTED_TYPES(input.scalar_type(), "{{ kernel_name_normalized }}_xpu", [&] {
    scalar_t *out_data = out.data_ptr<scalar_t>();
    scalar_t const *input_data = input.const_data_ptr<scalar_t>();
    queue.parallel_for(sycl::range<1>(static_cast<size_t>(count)), [=](sycl::id<1> index) {
      // Half-precision inputs are computed in float, as PyTorch's own kernels do.
      const float x = static_cast<float>(input_data[index]);
      out_data[index] = static_cast<scalar_t>(x / (1.0f + sycl::exp(-x)));
    });
  });
}
