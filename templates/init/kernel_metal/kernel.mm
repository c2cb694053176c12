#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include <ATen/core/Tensor.h>
#include <torch/mps.h>

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

// kernel-builder compiles the .metal sources into a metallib and embeds it in this header,
// which provides EMBEDDED_METALLIB_NAMESPACE::createLibrary.
#ifdef EMBEDDED_METALLIB_HEADER
#include EMBEDDED_METALLIB_HEADER
#else
#error "EMBEDDED_METALLIB_HEADER is not defined: build this kernel with kernel-builder"
#endif

namespace {

// The MTLBuffer behind an MPS tensor's storage.
id<MTLBuffer> metal_buffer(at::Tensor const &tensor) {
  return __builtin_bit_cast(id<MTLBuffer>, tensor.storage().data());
}

bool is_supported(c10::ScalarType type) {
  return type == c10::ScalarType::Float || type == c10::ScalarType::Half ||
         type == c10::ScalarType::BFloat16;
}

// The .metal file's kernel for `type`, which is_supported.
std::string kernel_function_name(c10::ScalarType type) {
  if (type == c10::ScalarType::Float) {
    return "{{ kernel_name_normalized }}_float";
  }
  return type == c10::ScalarType::Half ? "{{ kernel_name_normalized }}_half" : "{{ kernel_name_normalized }}_bfloat";
}

id<MTLComputePipelineState> make_pipeline(id<MTLDevice> device, std::string const &name) {
  NSError *error = nil;
  id<MTLLibrary> library = EMBEDDED_METALLIB_NAMESPACE::createLibrary(device, &error);
  TORCH_CHECK(library, "{{ kernel_name_normalized }}: cannot load the embedded Metal library: ",
              error ? error.localizedDescription.UTF8String : "unknown error");
  id<MTLFunction> function =
      [library newFunctionWithName:[NSString stringWithUTF8String:name.c_str()]];
  TORCH_CHECK(function, "{{ kernel_name_normalized }}: no Metal function named ", name);
  id<MTLComputePipelineState> pipeline = [device newComputePipelineStateWithFunction:function
                                                                               error:&error];
  TORCH_CHECK(pipeline, "{{ kernel_name_normalized }}: cannot create the pipeline for ", name, ": ",
              error ? error.localizedDescription.UTF8String : "unknown error");
  return pipeline;
}

// Creating a pipeline compiles the kernel for the GPU, so it is done once per dtype.
id<MTLComputePipelineState> pipeline_for(id<MTLDevice> device, c10::ScalarType type) {
  static std::mutex mutex;
  static std::unordered_map<int, id<MTLComputePipelineState>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto &pipeline = cache[static_cast<int>(type)];
  if (!pipeline) {
    pipeline = make_pipeline(device, kernel_function_name(type));
  }
  return pipeline;
}

}  // namespace

void {{ kernel_name_normalized }}(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.device().is_mps(), "{{ kernel_name_normalized }}: input must be an MPS tensor, got ",
              input.device());
  TORCH_CHECK(out.device() == input.device(), "{{ kernel_name_normalized }}: out is on ", out.device(),
              " but input is on ", input.device());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "{{ kernel_name_normalized }}: out has dtype ",
              out.scalar_type(), " but input has ", input.scalar_type());
  TORCH_CHECK(out.sizes() == input.sizes(), "{{ kernel_name_normalized }}: out has shape ", out.sizes(),
              " but input has ", input.sizes());
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
              "{{ kernel_name_normalized }}: input and out must be contiguous");
  TORCH_CHECK(is_supported(input.scalar_type()), "{{ kernel_name_normalized }}: unsupported dtype ",
              input.scalar_type());
  TORCH_CHECK(input.numel() <= std::numeric_limits<uint32_t>::max(),
              "{{ kernel_name_normalized }}: tensors of more than 2^32 - 1 elements are not supported");

  const uint32_t count = static_cast<uint32_t>(input.numel());
  if (count == 0) {
    return;
  }
  @autoreleasepool {
    id<MTLDevice> device = MTLCreateSystemDefaultDevice();
    id<MTLComputePipelineState> pipeline = pipeline_for(device, input.scalar_type());

    // Encode on PyTorch's MPS command buffer and queue, so the kernel is ordered with the
    // surrounding PyTorch work.
    id<MTLCommandBuffer> command_buffer = torch::mps::get_command_buffer();
    TORCH_CHECK(command_buffer, "{{ kernel_name_normalized }}: no MPS command buffer");
    dispatch_sync(torch::mps::get_dispatch_queue(), ^() {
      id<MTLComputeCommandEncoder> encoder = [command_buffer computeCommandEncoder];
      TORCH_CHECK(encoder, "{{ kernel_name_normalized }}: cannot create a compute command encoder");
      [encoder setComputePipelineState:pipeline];
      [encoder setBuffer:metal_buffer(input)
                  offset:input.storage_offset() * input.element_size()
                 atIndex:0];
      [encoder setBuffer:metal_buffer(out)
                  offset:out.storage_offset() * out.element_size()
                 atIndex:1];
      [encoder setBytes:&count length:sizeof(count) atIndex:2];
      const NSUInteger group = std::min<NSUInteger>(pipeline.maxTotalThreadsPerThreadgroup, count);
      [encoder dispatchThreads:MTLSizeMake(count, 1, 1)
          threadsPerThreadgroup:MTLSizeMake(group, 1, 1)];
      [encoder endEncoding];
      torch::mps::commit();
    });
  }
}
