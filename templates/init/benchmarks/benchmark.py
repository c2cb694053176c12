"""Benchmarks for {{ kernel_name }}; run them with `kernels benchmark <repo-id>`.

Each `benchmark_<workload>` method is timed after its `setup_<workload>` (or `setup`) ran;
`verify_<workload>` returns the reference result that `self.out` is checked against.
"""
import torch
import torch.nn.functional as F
from kernels.benchmark import Benchmark


class {{ kernel_name_class }}Benchmark(Benchmark):
    seed = 0

    def setup_small(self):
        self.x = torch.randn(16, 1024, device=self.device, dtype=torch.float16)
        self.out = torch.empty_like(self.x)

    def benchmark_small(self):
        self.kernel.{{ kernel_name_normalized }}(self.x, out=self.out)

    def verify_small(self) -> torch.Tensor:
        return F.silu(self.x.float()).to(self.x.dtype)

    def setup_large(self):
        self.x = torch.randn(64, 8192, 256, device=self.device, dtype=torch.float16)
        self.out = torch.empty_like(self.x)

    def benchmark_large(self):
        self.kernel.{{ kernel_name_normalized }}(self.x, out=self.out)

    def verify_large(self) -> torch.Tensor:
        return F.silu(self.x.float()).to(self.x.dtype)
