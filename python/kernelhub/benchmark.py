# SPDX-License-Identifier: Apache-2.0
"""`Benchmark`: the base class of a kernel's `benchmarks/benchmark*.py` scripts, with the
reference's (`kernels.benchmark.Benchmark`) attributes and methods.

A script subclasses it and defines workloads by method name: `benchmark_<w>` is the timed call,
`setup_<w>` (else `setup`) prepares its tensors, and `verify_<w>`, when present, returns the
expected result that `self.out` must match. `kernelhub benchmark` (kernelhub._benchmark_runner)
finds the subclasses, loads the kernel and sets `kernel` and `device` on a fresh instance per
workload. Importing this module does not import torch. A script written with
`from kernelhub import Benchmark` also runs under the reference's `kernels benchmark`, and one
written with `from kernels.benchmark import Benchmark` under `kernelhub benchmark`, with or
without the reference installed.
"""
import sys
from typing import Any

# Under the reference's `kernels benchmark`, whose runner keeps only subclasses of
# `kernels.benchmark.Benchmark` and has imported that module before running a script, ours
# derives from it, so one script (`from kernelhub import Benchmark`) runs under both tools.
# Elsewhere the reference is not imported (it would bring in torch and huggingface_hub).
_reference = sys.modules.get("kernels.benchmark")
_Base: type = getattr(_reference, "Benchmark", object) if _reference is not None else object


class Benchmark(_Base):  # type: ignore[misc, valid-type]
    """Subclass with `benchmark_<workload>` methods; run with `kernelhub benchmark <repo_id>`.

    ```
    class ReluBenchmark(Benchmark):
        seed = 0

        def setup_small(self):
            self.x = torch.randn(16, 1024, device=self.device)
            self.out = torch.empty_like(self.x)

        def benchmark_small(self):
            self.kernel.relu(self.x, out=self.out)

        def verify_small(self) -> torch.Tensor:
            return torch.relu(self.x)
    ```
    """

    # Seeds torch and random before each workload's setup when set.
    seed: int | None = None
    # The torch device the runner picked ("cpu", "cuda", "mps", "xpu", "npu").
    device: str = "cpu"

    def __init__(self) -> None:
        self.kernel: Any = None
        # The tensor a workload writes into; verify_<w>'s result is compared with it.
        self.out: Any = None

    def setup(self) -> None:
        """Prepares the tensors of workloads that have no setup_<workload> of their own."""
