"""rotary: rotary position embedding as a CPU op, with kernel layers for `kernelize`.

`layers.RotaryPosEmb` replaces transformers' `apply_rotary_pos_emb`, which transformers 5.22.2
decorates with `use_kernel_forward_from_hub("rotary_pos_emb")` and attaches to its attention
modules with `use_kernelized_func`. Two model families decorate a function of another layout
under the same name: `layers.RotaryPosEmbInterleaved` rotates neighbouring pairs
(openai_privacy_filter), `layers.RotaryPosEmbReversed` turns the other way (nanochat).
"""
from . import layers
from .functions import apply_rotary

__all__ = ["apply_rotary", "layers"]
