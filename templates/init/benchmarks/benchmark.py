"""Benchmarks for {{ kernel_name }}; run them with `kernels benchmark <repo-id>` or
`kernelhub benchmark <repo-id>` (both accept this import; `kernelhub benchmark --workload small`
times one workload).

Each `benchmark_<workload>` method is timed after its `setup_<workload>` (or `setup`) ran;
`verify_<workload>` returns the reference result that `self.out` is checked against. Both are
called 100 times by default (--iterations), so each workload is sized for the device: on the
cpu a large accelerator workload would take minutes.
"""
import torch
import torch.nn.functional as F
from kernels.benchmark import Benchmark

# Elements of the large workload: 128 Mi on an accelerator, 1 Mi on the cpu.
LARGE_SHAPE = {"cpu": (64, 1024, 16)}
LARGE_SHAPE_ACCELERATOR = (64, 8192, 256)


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
        shape = LARGE_SHAPE.get(self.device, LARGE_SHAPE_ACCELERATOR)
        self.x = torch.randn(*shape, device=self.device, dtype=torch.float16)
        self.out = torch.empty_like(self.x)

    def benchmark_large(self):
        self.kernel.{{ kernel_name_normalized }}(self.x, out=self.out)

    def verify_large(self) -> torch.Tensor:
        return F.silu(self.x.float()).to(self.x.dtype)
