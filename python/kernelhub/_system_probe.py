# SPDX-License-Identifier: Apache-2.0
"""What the reference loader asks of this Python and its torch, asked the same way.

One source, two uses: the C++ core embeds this file and runs it in a child interpreter
(`python -c`, which prints the JSON line below) to learn about a Python it does not run in,
and the Python package imports it, so a load in this process pays no compile of it (an
installed module has its bytecode beside it) and torch is imported once. It must keep to the
standard library and torch, print nothing when imported, and run on any Python a kernel may
be built for."""

from __future__ import annotations

import json
import os
import platform
import sys
import sysconfig


def _generated_version(path: str) -> str | None:
    """The version a setuptools-scm style `_version.py` assigns to `__version__`
    (`__version__ = version = '0.1.15.post2'`), read as text: importing it would import the
    package's `__init__`. None when the file is missing or says it another way. Read with
    os.read, half the cost of a text-mode open for a file this small."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            text = os.read(fd, 1 << 16).decode("utf-8")
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        # Not the annotation (`__version__: str`) the file may declare first.
        if not line.startswith("__version__") or "=" not in line:
            continue
        value = line.rpartition("=")[2].strip()
        if len(value) > 2 and value[0] == value[-1] and value[0] in "'\"":
            return value[1:-1]
        return None
    return None


def _tvm_ffi_package_dirs() -> list[str]:
    """Where `import tvm_ffi` would find the package: the first folder of sys.path that holds
    a `tvm_ffi` package (what the path finder picks, as no installer puts tvm_ffi anywhere
    else), looked for with one stat per folder; else what importlib finds (a custom finder, an
    editable install, or no tvm_ffi), which walks every finder and costs ~60 us."""
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        package = os.path.join(entry, "tvm_ffi")
        if os.path.isfile(os.path.join(package, "__init__.py")):
            return [package]
    import importlib.util

    try:
        spec = importlib.util.find_spec("tvm_ffi")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return list(spec.submodule_search_locations)


def _tvm_ffi_version() -> str | None:
    """apache-tvm-ffi's version, as `tvm_ffi.__version__` gives it (what the reference reads),
    without importing tvm_ffi, which costs ~30 ms (it loads its library and runs ldconfig):
    from the package's `_version.py`, else from its package metadata. The dist-info folder is
    looked for beside the `tvm_ffi` package (one listing of one folder, where
    importlib.metadata lists every folder of sys.path), and only the head of METADATA is read
    (importlib.metadata.version() parses the whole file as an e-mail)."""
    module = sys.modules.get("tvm_ffi")
    if module is not None:
        return str(module.__version__)
    packages = _tvm_ffi_package_dirs()
    for package in packages:
        # What the reference reads, `tvm_ffi.__version__`, comes from the package's generated
        # `_version.py`: one small file, where a listing of site-packages costs ~0.2 ms.
        version = _generated_version(os.path.join(package, "_version.py"))
        if version:
            return version
    for package in packages:
        site = os.path.dirname(package)
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for name in names:
            # Installers name it apache_tvm_ffi-<version>.dist-info (the project part escaped,
            # PEP 491); the version is read from the file, not from the folder's name.
            project = name.partition("-")[0].lower().replace(".", "_")
            if not (name.endswith(".dist-info") and project == "apache_tvm_ffi"):
                continue
            try:
                with open(os.path.join(site, name, "METADATA"), encoding="utf-8") as stream:
                    for line in stream:
                        if not line.strip():
                            break  # the end of the headers
                        if line.lower().startswith("version:"):
                            return line[len("version:"):].strip()
            except OSError:
                continue
    return None


def _torch_facts(torch, device: bool) -> dict:
    facts = {
        "version": str(torch.__version__),
        "cxx11": bool(torch.compiled_with_cxx11_abi()),
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        "xpu": getattr(torch.version, "xpu", None),
        "tpu": hasattr(torch.backends, "tpu"),
        "neuron": hasattr(torch, "neuron"),
        # Metal exists on macOS only: elsewhere torch answers False, after ~10 us of asking.
        "mps": sys.platform == "darwin" and bool(torch.backends.mps.is_available()),
        "privateuse1": None,
        "cann": None,
    }
    if device:
        try:
            if facts["cuda"] or facts["hip"]:
                facts["device"] = bool(torch.cuda.is_available())
            elif facts["xpu"]:
                facts["device"] = bool(torch.xpu.is_available())
        except Exception:
            facts["device"] = False
    try:
        facts["privateuse1"] = torch._C._get_privateuse1_backend_name()
    except Exception:
        pass
    if facts["privateuse1"] == "npu":
        try:
            from torch_npu.utils.collect_env import get_cann_version
            version = get_cann_version()
            facts["cann"] = f"{version[0]}.{version[2]}"
        except Exception:
            pass
    return facts


def _cudart_version() -> str | None:
    """Without torch: the CUDA runtime's version, where a libcudart can be loaded."""
    try:
        import ctypes
        import ctypes.util
        name = ctypes.util.find_library("cudart")
        if name:
            version = ctypes.c_int(0)
            if ctypes.CDLL(name).cudaRuntimeGetVersion(ctypes.byref(version)) == 0:
                return f"{version.value // 1000}.{(version.value % 1000) // 10}"
    except Exception:
        pass
    return None


def probe(device: bool = True) -> dict:
    """What the loader needs to know of this machine; with `device` False, not whether torch's
    backend has a device (its first ask costs more than the rest of the probe)."""
    out = {
        "executable": sys.executable,
        "machine": platform.machine(),
        "system": platform.system(),
        "mac_ver": platform.mac_ver()[0] if sys.platform == "darwin" else "",
        "free_threaded": sys.version_info < (3, 15) and
                         bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    }
    try:
        import torch
    except Exception:
        torch = None
    if torch is not None:
        out["torch"] = _torch_facts(torch, device)
    else:
        cudart = _cudart_version()
        if cudart:
            out["cudart"] = cudart
    try:
        tvm_ffi = _tvm_ffi_version()
        if tvm_ffi:
            out["tvm_ffi"] = tvm_ffi
    except Exception:
        pass
    return out


if __name__ == "__main__":
    # Run by the C++ core in a child interpreter that exits once it has answered: nothing it
    # imports becomes garbage, so the collector stays off, and the frozen objects spare the
    # exit a walk over all of torch's (about half a second of a 1.7 s probe).
    import gc
    gc.disable()
    print(json.dumps(probe()))
    gc.freeze()
