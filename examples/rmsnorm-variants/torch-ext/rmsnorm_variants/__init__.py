"""rmsnorm-variants: gated and zero-centered RMS normalization as CPU ops, with kernel layers.

`layers.RMSNormGated` and `layers.RMSNormZeroCentered` replace the forward of modules decorated
with `use_kernel_forward_from_hub("RMSNormGated")` / `("RMSNormZeroCentered")`, such as
transformers' Qwen3NextRMSNormGated and Qwen3_5RMSNorm.
"""
from . import layers
from .functions import rms_norm_gated, rms_norm_zero_centered

__all__ = ["layers", "rms_norm_gated", "rms_norm_zero_centered"]
