"""relu_tvm_ffi: an example CPU and CUDA kernel exported through TVM-FFI.

Works on any array that speaks DLPack (torch tensors here); torch is only needed to allocate
the output when none is given.
"""
import tvm_ffi

from ._ops import ops

__all__ = ["relu"]

_FUNCTIONS = {"cpu": "relu_cpu", "cuda": "relu_cuda"}


def relu(x, out=None):
    """Returns max(x, 0) for a float32 array, written into `out` when it is given."""
    if out is None:
        import torch

        out = torch.empty_like(x)
    device = tvm_ffi.from_dlpack(x).device.type
    function = getattr(ops, _FUNCTIONS.get(device, f"relu_{device}"), None)
    if function is None:
        raise NotImplementedError(f"this relu_tvm_ffi build has no {device} implementation")
    function(tvm_ffi.from_dlpack(out), tvm_ffi.from_dlpack(x))
    return out
