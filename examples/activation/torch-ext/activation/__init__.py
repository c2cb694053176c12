"""activation: transformers' activation functions as CPU ops, with kernel layers for `kernelize`.

`layers` has one class per layer name transformers decorates its activation modules with
(`use_kernel_forward_from_hub("GeLU")`, "GeluTanh", "NewGELU", "FastGELU", "QuickGELU", "SiLU").
"""
from . import layers
from .functions import gelu, gelu_tanh, quick_gelu, silu

__all__ = ["gelu", "gelu_tanh", "layers", "quick_gelu", "silu"]
