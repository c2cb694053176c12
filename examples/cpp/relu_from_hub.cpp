// SPDX-License-Identifier: Apache-2.0
// Loads a relu kernel from the Hub (HF_ENDPOINT: huggingface.co or a `kernelhub serve`) with
// kernelhub's C++ API, calls relu through the Torch dispatcher and compares with torch::relu.
// Usage: relu_from_hub REPO_ID [VERSION [DEVICE]]     e.g. relu_from_hub demo/relu 1
// DEVICE is where the tensors live: cpu (the default; the cpu variant is loaded) or cuda (the
// variant that fits this machine is loaded, as get_kernel picks it without a backend).
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <torch/torch.h>

#include <kernelhub/kernelhub.hpp>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " REPO_ID [VERSION [DEVICE]]\n";
    return 2;
  }
  kernelhub::GetKernelOptions options;
  options.version = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 1u;
  const std::string device = argc > 3 ? argv[3] : "cpu";
  if (device != "cpu" && device != "cuda") {
    std::cerr << "relu_from_hub: DEVICE must be cpu or cuda, not \"" << device << "\"\n";
    return 2;
  }
  if (device == "cpu") {
    options.backend = "cpu";  // CPU tensors: the cpu variant, whatever the machine has
  }
  try {
    const kernelhub::KernelHandle kernel = kernelhub::get_kernel(argv[1], options);
    const at::Tensor x = torch::randn({4, 64}, torch::Device(device));
    at::Tensor out = torch::empty_like(x);
    kernel.call<void, at::Tensor&, const at::Tensor&>("relu", out, x);
    const bool same = torch::equal(out, torch::relu(x));
    std::cout << kernel.id() << " " << kernel.variant_path().filename().string() << " "
              << (same ? "matches" : "DIFFERS FROM") << " torch::relu\n";
    return same ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "relu_from_hub: " << error.what() << "\n";
    return 1;
  }
}
