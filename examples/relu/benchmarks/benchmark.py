"""Benchmarks for relu; run them with `kernelhub benchmark examples/relu` (a local build) or
`kernelhub benchmark <repo-id>@v1` (a version on the hub).

Each `benchmark_<workload>` method is timed after its `setup_<workload>` (or `setup`) ran;
`verify_<workload>` returns the reference result that `self.out` is checked against. The
tensors are float32: the CPU kernel dispatches on float and double only.
"""
import torch
import torch.nn.functional as F
from kernelhub import Benchmark


class ReluBenchmark(Benchmark):
    seed = 0

    def setup_small(self):
        self.x = torch.randn(16, 1024, device=self.device, dtype=torch.float32)
        self.out = torch.empty_like(self.x)

    def benchmark_small(self):
        self.kernel.relu(self.x, out=self.out)

    def verify_small(self) -> torch.Tensor:
        return F.relu(self.x)

    def setup_large(self):
        self.x = torch.randn(256, 4096, device=self.device, dtype=torch.float32)
        self.out = torch.empty_like(self.x)

    def benchmark_large(self):
        self.kernel.relu(self.x, out=self.out)

    def verify_large(self) -> torch.Tensor:
        return F.relu(self.x)
