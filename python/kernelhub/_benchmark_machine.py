# SPDX-License-Identifier: Apache-2.0
"""The machine a benchmark runs on: the device this process can use, the reference's
machineInfo, the device's slug for uploaded results, and synchronisation after each call."""
import platform
import re
from pathlib import Path



def _pick_device(torch) -> tuple[str | None, str]:
    """(backend for get_kernel, torch device): the accelerator this process can use, not the
    one torch was built for. None lets the loader choose (a device it alone knows)."""
    if torch.cuda.is_available():
        return ("rocm" if getattr(torch.version, "hip", None) else "cuda"), "cuda"
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return "xpu", "xpu"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "metal", "mps"
    if hasattr(torch, "npu") and torch.npu.is_available():
        return None, "npu"
    return "cpu", "cpu"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine_info(torch, device: str) -> dict:
    """The reference's machineInfo: gpu, backend, pytorchVersion, os, cpu (gpuCores on Macs
    only, which we do not report)."""
    gpu, backend = "N/A", "CPU"
    if device == "cuda":
        gpu = torch.cuda.get_device_name(0)
        hip = getattr(torch.version, "hip", None)
        if hip:
            backend = f"ROCm {hip}"
        else:
            backend = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CUDA"
    elif device == "xpu":
        gpu, backend = torch.xpu.get_device_name(0), "XPU"
    elif device == "mps":
        gpu, backend = "Apple MPS", "MPS"
    elif device == "npu":
        backend = "NPU"
    return {
        "gpu": gpu,
        "backend": backend,
        "pytorchVersion": torch.__version__,
        "os": f"{platform.system()} {platform.release()}",
        "cpu": platform.processor() or platform.machine() or "Unknown",
    }


def device_slug(info: dict) -> str:
    """The file name of an uploaded result: the GPU's name, else `cpu-<model>`."""
    name = info["gpu"] if info["gpu"] != "N/A" else f"cpu-{_cpu_model()}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return slug or "unknown"


def _synchronize(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "xpu":
        torch.xpu.synchronize()
    elif device == "mps":
        torch.mps.synchronize()
