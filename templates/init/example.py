#!/usr/bin/env -S uv run --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["kernels", "torch"]
# ///
"""Runs the locally built {{ kernel_name }} kernel once and checks it against PyTorch.

Build the kernel first (`kernel-builder build-and-copy`), which puts its variants in ./build.
"""
from pathlib import Path

import torch
import torch.nn.functional as F
from kernels import get_local_kernel


def pick_device() -> tuple[str, str]:
    """The first device this kernel has a backend for that is present here, and the backend
    to load for it: without one the loader picks by how torch was built (the cuda variant on
    a CUDA torch), even where no GPU is present."""
{% if has_cuda or has_rocm %}
    if torch.cuda.is_available():  # CUDA and ROCm builds of PyTorch both use "cuda"
        return "cuda", "rocm" if torch.version.hip else "cuda"
{% endif %}
{% if has_xpu %}
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return "xpu", "xpu"
{% endif %}
{% if has_metal %}
    if torch.backends.mps.is_available():
        return "mps", "metal"
{% endif %}
{% if has_cpu %}
    return "cpu", "cpu"
{% else %}
    raise SystemExit("none of this kernel's devices ({{ backends | join(", ") }}) is available")
{% endif %}


def main() -> None:
    device, backend = pick_device()
    kernel = get_local_kernel(Path(__file__).resolve().parent, backend=backend)
    x = torch.randn(8, 1024, device=device)
    y = kernel.{{ kernel_name_normalized }}(x)
    torch.testing.assert_close(y, F.silu(x))
    print(f"{{ kernel_name_normalized }} matches torch.nn.functional.silu on {device} "
          f"(the {backend} variant)")


if __name__ == "__main__":
    main()
