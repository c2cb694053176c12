# SPDX-License-Identifier: Apache-2.0
"""`Mode`: what `kernelize` is asked for, and the keys of a kernel mapping (layers.md §3)."""

from enum import Flag


class Mode(Flag):
    """The kernelize mode and the mode keys of a kernel mapping.

    `INFERENCE` and `TRAINING` exclude each other; `TORCH_COMPILE` combines with either;
    `FALLBACK` is a mapping key only, used when no other key fits.
    """

    _NONE = 0
    FALLBACK = 1
    TRAINING = 2
    INFERENCE = 4
    TORCH_COMPILE = 8

    def __or__(self, other: "Mode") -> "Mode":
        # Only `|` validates, as in kernels: `^`, `&` and Mode(n) can still build a forbidden
        # value, which kernelize rejects later ("Unsupported mode").
        union = super().__or__(other)
        if Mode.INFERENCE in union and Mode.TRAINING in union:
            raise ValueError("Mode.INFERENCE and Mode.TRAINING are mutually exclusive.")
        if Mode.FALLBACK in union and union != Mode.FALLBACK:
            raise ValueError("Mode.FALLBACK cannot be combined with other modes.")
        return union
