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


def pick_device() -> str:
    """The first device this kernel has a backend for that is present here."""
{% if has_cuda or has_rocm %}
    if torch.cuda.is_available():  # CUDA and ROCm builds of PyTorch both use "cuda"
        return "cuda"
{% endif %}
{% if has_xpu %}
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return "xpu"
{% endif %}
{% if has_metal %}
    if torch.backends.mps.is_available():
        return "mps"
{% endif %}
{% if has_cpu %}
    return "cpu"
{% else %}
    raise SystemExit("none of this kernel's devices ({{ backends | join(", ") }}) is available")
{% endif %}


def main() -> None:
    kernel = get_local_kernel(Path(__file__).resolve().parent)
    device = pick_device()
    x = torch.randn(8, 1024, device=device)
    y = kernel.{{ kernel_name_normalized }}(x)
    torch.testing.assert_close(y, F.silu(x))
    print(f"{{ kernel_name_normalized }} matches torch.nn.functional.silu on {device}")


if __name__ == "__main__":
    main()
