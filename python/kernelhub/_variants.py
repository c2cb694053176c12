# SPDX-License-Identifier: Apache-2.0
"""Decision-trace entries as kernels returns them: `VariantAccepted(variant)` and
`VariantRejected(variant, reason)` whose `variant` is a variant object with `variant_str`,
`framework` and `arch`. Our variant objects are also the variant's name as a `str`, so code
that compared or printed names keeps working."""


from dataclasses import dataclass


class _Part(str):
    """One part of a variant name (`torch215`, `cu132-x86_64-linux`)."""

    @property
    def variant_str(self) -> str:
        return str(self)


class ArchVariant(str):
    """An arch variant: a framework part (`torch215`, `torch-stable-abi211`, `tvm-ffi01`) and an
    arch part (backend, cpu, os)."""

    @property
    def variant_str(self) -> str:
        return str(self)

    @property
    def framework(self) -> _Part:
        return _Part("-".join(self.split("-")[:-3]))

    @property
    def arch(self) -> _Part:
        return _Part("-".join(self.split("-")[-3:]))


class NoarchVariant(str):
    """A noarch variant: `torch-<backend>` (or the legacy `torch-universal`)."""

    @property
    def variant_str(self) -> str:
        return str(self)

    @property
    def framework(self) -> _Part:
        return _Part("torch")

    @property
    def arch(self) -> _Part:
        return _Part(self.split("-", 1)[1] if "-" in self else "")


def variant_object(name: str) -> ArchVariant | NoarchVariant:
    parts = name.split("-")
    if len(parts) == 2 and parts[0] == "torch":
        return NoarchVariant(name)
    return ArchVariant(name)


@dataclass(unsafe_hash=True)
class VariantAccepted:
    variant: ArchVariant | NoarchVariant


@dataclass(unsafe_hash=True)
class VariantRejected:
    variant: ArchVariant | NoarchVariant
    reason: str


def decisions(trace) -> list[VariantAccepted | VariantRejected]:
    return [VariantAccepted(variant_object(name)) if reason is None
            else VariantRejected(variant_object(name), reason) for name, reason in trace]
