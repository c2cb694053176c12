"""rmsnorm: RMS normalization and SiLU as CPU and CUDA ops, with kernel layers for `kernelize`.

`layers.RMSNorm` and `layers.SiLU` replace the forward of modules decorated with
`use_kernel_forward_from_hub("RMSNorm")` / `("SiLU")`, such as transformers' LlamaRMSNorm and
SiLUActivation.
"""
from . import layers
from .functions import rms_norm, silu

__all__ = ["layers", "rms_norm", "silu"]
