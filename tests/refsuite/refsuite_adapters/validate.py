# SPDX-License-Identifier: Apache-2.0
"""`kernels.validate`: the checks run on a variant before it is imported.

kernelhub runs its checks inside its loads, not as separate validators, so each validator
here is answered by kernelhub doing what it does on a load:

- `ArchValidator`: the loader's arch check (`archs._check_arch_incompatibility`, over
  `loader::arch_mismatch`).
- `DependencyValidator`: python-depends, `kernelhub._loader.validate_dependencies`.
- `MinverValidator`, `DirtyValidator`: `kernelhub.get_local_kernel` of a variant holding that
  metadata.json (and an empty `__init__.py`): what kernelhub raises for kernels-minver and
  reports for a dirty build is what a user sees on a load. The loaded kernel is then forgotten
  (`kernelhub._loader.forget_loaded_kernel`).
- `_installed_version()`: `kernelhub.compat_version` (the kernels release whose API kernelhub
  matches; kernels-minver is compared with it) as a `kernelhub.data.Version`.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, parse

import kernelhub
from kernelhub import _loader
from kernelhub.data import Version

from .archs import _check_arch_incompatibility


class DependencyValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        _loader.validate_dependencies(metadata.name.python_name, metadata.python_depends)


class ArchValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        _check_arch_incompatibility(metadata, variant)


def _load(metadata, variant: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / variant
        root.mkdir()
        (root / "metadata.json").write_text(metadata._text)
        (root / "__init__.py").write_text("")
        try:
            kernelhub.get_local_kernel(root)
        finally:
            _loader.forget_loaded_kernel(root)


class DirtyValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        _load(metadata, variant)


class MinverValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        _load(metadata, variant)


def _installed_version() -> Version | None:
    try:
        release = parse(kernelhub.compat_version).release
    except InvalidVersion:
        return None
    return Version.from_str(".".join(str(part) for part in release))


@dataclass
class AllValidator:
    validators: list

    def validate_metadata(self, *, metadata, variant: str) -> None:
        for validator in self.validators:
            validator.validate_metadata(metadata=metadata, variant=variant)


def default_metadata_validators() -> list:
    return [DependencyValidator(), MinverValidator(), DirtyValidator()]


__all__ = ["ArchValidator", "AllValidator", "DependencyValidator", "DirtyValidator",
           "MinverValidator", "_check_arch_incompatibility", "_installed_version",
           "default_metadata_validators"]
