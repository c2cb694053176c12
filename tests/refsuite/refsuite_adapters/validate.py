# SPDX-License-Identifier: Apache-2.0
"""`kernels.validate`: the checks run on every variant before it is imported.

- `ArchValidator`: the loader's arch check (`archs._check_arch_incompatibility`, over
  `loader::arch_mismatch`).
- `DirtyValidator`: the warning kernelhub's loader gives for a build from a dirty git tree,
  taken from `_kernelhub.resolve_kernel_module` (the module resolution every load runs) on the
  variant's metadata.json and reported by `kernelhub._loader.report_variant_warnings`, as a load
  reports it.
- `DependencyValidator`: python-depends, `kernelhub._loader.validate_dependencies`.
- `MinverValidator`: kernels-minver against `kernelhub.compat_version` (the kernels release
  whose API kernelhub matches); kernelhub enforces it in its loaders after issue 21 §1, on
  another branch, so on this one it says so.
- `_installed_version()`: `kernelhub.compat_version`'s release, as a `kernelhub.data.Version`.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, parse

import kernelhub
from kernelhub import _kernelhub, _loader
from kernelhub.data import Version

from .archs import _check_arch_incompatibility


class DependencyValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        _loader.validate_dependencies(metadata.name.python_name, metadata.python_depends)


class ArchValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        _check_arch_incompatibility(metadata, variant)


class DirtyValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / variant
            root.mkdir()
            (root / "metadata.json").write_text(metadata._json)
            (root / "__init__.py").write_text("")
            messages = _kernelhub.resolve_kernel_module(root)["warnings"]
        _loader.report_variant_warnings(messages)


def _installed_version() -> Version | None:
    try:
        release = parse(kernelhub.compat_version).release
    except InvalidVersion:
        return None
    return Version.from_str(".".join(str(part) for part in release))


class MinverValidator:
    def validate_metadata(self, *, metadata, variant: str) -> None:
        raise NotImplementedError(
            "kernelhub enforces kernels-minver in its loaders after issue 21 §1 (another "
            "branch); this branch has no function to map MinverValidator onto")


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
