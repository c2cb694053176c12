// SPDX-License-Identifier: Apache-2.0
// Loads two builds of examples/relu (different kernel ids) into one C++ process through
// kernelhub's C++ API, calls relu through the Torch dispatcher and compares with torch::relu.
// Usage: relu_side_by_side <kernel dir or variant dir> [<second one>]
#include <iostream>

#include <torch/torch.h>

#include <kernelhub/kernelhub.hpp>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " KERNEL_PATH [KERNEL_PATH]\n";
    return 2;
  }
  const at::Tensor x = torch::randn({4, 64});
  const at::Tensor expected = torch::relu(x);
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const kernelhub::KernelHandle kernel = kernelhub::get_local_kernel(argv[i], "cpu");
    at::Tensor out = torch::empty_like(x);
    kernel.call<void, at::Tensor&, const at::Tensor&>("relu", out, x);
    const bool same = torch::equal(out, expected);
    failures += same ? 0 : 1;
    std::cout << kernel.id() << " " << kernel.variant_path().filename().string() << " "
              << (same ? "matches" : "DIFFERS FROM") << " torch::relu\n";
  }
  return failures == 0 ? 0 : 1;
}
