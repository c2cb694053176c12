# SPDX-License-Identifier: Apache-2.0
"""`Device` and the CUDA/ROCm capability ranges that key a kernel mapping (layers.md §4).

The reference wraps these frozen dataclasses in huggingface_hub's `strict`, so a reversed
range raises `StrictDataclassClassValidationError` (with the ValueError as its cause). Users
catch that class, so we raise it too when huggingface_hub is installed, and a plain ValueError
otherwise. huggingface_hub is imported only then: importing it costs ~35 ms (httpx), which
`import kernelhub` must not pay.
"""

import inspect
from dataclasses import dataclass


def _with_validators(cls):
    """Runs the class's `validate_*` methods after __init__, as huggingface_hub's strict does
    (its per-field type checks do not fire on these frozen classes in kernels either)."""
    init = cls.__init__
    validators = [name for name in dir(cls) if name.startswith("validate_")]

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for name in validators:
            try:
                getattr(self, name)()
            except (ValueError, TypeError) as error:
                raise _validation_error(name, error) from error

    __init__.__signature__ = inspect.signature(init)
    cls.__init__ = __init__
    return cls


def _validation_error(validator: str, cause: Exception) -> Exception:
    try:
        from huggingface_hub.errors import StrictDataclassClassValidationError
    except ImportError:
        return cause
    return StrictDataclassClassValidationError(validator=validator, cause=cause)


class _CapabilityRange:
    """An inclusive range of capabilities, major*10 + minor (7.5 is 75)."""

    def validate_capability_range(self):
        if self.min_capability > self.max_capability:
            raise ValueError(
                f"min_capability ({self.min_capability}) must be <= max_capability "
                f"({self.max_capability})")

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return (self.min_capability, self.max_capability) == (
            other.min_capability, other.max_capability)

    def __hash__(self):
        return hash((self.min_capability, self.max_capability))


@_with_validators
@dataclass(frozen=True, eq=False)
class CUDAProperties(_CapabilityRange):
    """CUDA compute capabilities a kernel supports: `min_capability` to `max_capability`,
    both inclusive (use `sys.maxsize` for no upper bound)."""

    min_capability: int
    max_capability: int


@_with_validators
@dataclass(frozen=True, eq=False)
class ROCMProperties(_CapabilityRange):
    """ROCm capabilities (the gfx version as major*10 + minor) a kernel supports, inclusive."""

    min_capability: int
    max_capability: int


@_with_validators
@dataclass(frozen=True, eq=False)
class Device:
    """A device type (`cpu`, `cuda`, `rocm`, `mps`, `xpu`, `npu`, `neuron`, `tpu`) and, for
    cuda and rocm, the capability range a mapping entry applies to."""

    type: str
    properties: CUDAProperties | ROCMProperties | None = None

    def __post_init__(self):
        if isinstance(self.properties, CUDAProperties) and self.type != "cuda":
            raise ValueError("CUDAProperties is only supported for 'cuda' devices.")
        if isinstance(self.properties, ROCMProperties) and self.type != "rocm":
            raise ValueError("ROCMProperties is only supported for 'rocm' devices.")

    def __eq__(self, other):
        if not isinstance(other, Device):
            return NotImplemented
        return self.type == other.type and self.properties == other.properties

    def __hash__(self):
        return hash((self.type, self.properties))
