# SPDX-License-Identifier: Apache-2.0
"""`kernelhub.data`: the kernels-data types, with the Python API kernels 0.17.2 gives them
(`kernels._rust`, whose `Metadata` is `kernels.Metadata`), so code written against that API
(or against the `kernels_data` package) moves by changing the import.

Everything that parses or checks runs in kernelhub's C++ core, the same code the loader and
kernel-builder use: versions, kernel names, backends, git object ids, metadata.json, build.toml,
variant digests and their validation, kernels.lock. This module wraps the results in the
reference's classes: `Backend`, `BackendInfo`, `Build`, `General`, `Digest`,
`DigestAlgorithm`, `DigestViolation`, `DigestValidationError`, `GitStatus`,
`KernelBuilderVersion`, `Provenance`, `KernelDependency`, `KernelVersion`, `KernelLock`,
`KernelLocks`, `KernelName`, `KernelPaths`, `Metadata`, `NixKernelLock`, `NixKernelLocks`,
`Version`. Values are immutable, comparable and hashable as the reference's are.

Where kernels-data releases disagree, kernels 0.17.2 wins: `str(Version.from_str("12.8.0"))` is
"12.8.0" (kernels-data 0.16.2 printed "12.8"; both compare equal to "12.8"), and `tpu` is a
backend. See docs/moving-from-kernels.md.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from . import _kernelhub

__version__ = "0.1.0"

__all__ = [
    "Backend",
    "BackendInfo",
    "Build",
    "General",
    "Provenance",
    "DigestAlgorithm",
    "GitStatus",
    "KernelBuilderVersion",
    "KernelDependency",
    "KernelLock",
    "KernelPaths",
    "KernelLocks",
    "KernelName",
    "KernelVersion",
    "Metadata",
    "NixKernelLock",
    "NixKernelLocks",
    "Digest",
    "DigestViolation",
    "DigestValidationError",
    "Version",
    "__version__",
]


# ------------------------------------------------------------------------------------------
# Names and versions


class Version:
    """A dotted numeric version (`12.8.0`). Versions that differ only in trailing zeros compare
    (and hash) equal; `str` gives the components as written."""

    __slots__ = ("_key", "_parts")

    def __init__(self, *_args):
        raise TypeError("use Version.from_str")

    @staticmethod
    def from_str(s: str) -> "Version":
        version = object.__new__(Version)
        version._key = tuple(_kernelhub.data_version(s))  # ValueError from the core
        version._parts = tuple(int(part) for part in s.strip().split("."))
        return version

    def __str__(self) -> str:
        return ".".join(str(part) for part in self._parts)

    def __repr__(self) -> str:
        return f"Version('{self}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other: "Version") -> bool:
        return self._key < other._key

    def __le__(self, other: "Version") -> bool:
        return self._key <= other._key

    def __gt__(self, other: "Version") -> bool:
        return self._key > other._key

    def __ge__(self, other: "Version") -> bool:
        return self._key >= other._key

    def __hash__(self) -> int:
        return hash(self._key)


class KernelName:
    """A kernel name matching `^[a-z][-a-z0-9]*[a-z0-9]$` (ValueError otherwise)."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = _kernelhub.data_kernel_name(name)

    @property
    def python_name(self) -> str:
        """The name with dashes replaced by underscores."""
        return self._name.replace("-", "_")

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"KernelName('{self._name}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelName) and self._name == other._name

    def __hash__(self) -> int:
        return hash(self._name)


class Backend(enum.Enum):
    """A kernel backend. `str` is the kebab-case name used in build.toml and metadata.json."""

    CANN = "CANN"
    CPU = "CPU"
    CUDA = "CUDA"
    Metal = "Metal"
    Neuron = "Neuron"
    ROCm = "ROCm"
    TPU = "TPU"
    XPU = "XPU"

    @staticmethod
    def from_str(s: str) -> "Backend":
        """Parses a backend name, in any case (ValueError for an unknown one)."""
        return _BACKEND_BY_NAME[_kernelhub.data_backend(s)]

    def __str__(self) -> str:
        return self.value.lower()

    def __repr__(self) -> str:
        return f"Backend.{self.name}"


_BACKEND_BY_NAME = {str(backend): backend for backend in Backend}


@dataclass(frozen=True)
class BackendInfo:
    """A variant's backend and, for GPU backends, the archs it was built for."""

    backend_type: Backend
    archs: Optional[list[str]] = None

    def __repr__(self) -> str:
        return f"BackendInfo(backend_type={self.backend_type!r}, archs={self.archs!r})"

    def __hash__(self) -> int:
        return hash((self.backend_type, tuple(self.archs) if self.archs is not None else None))


# ------------------------------------------------------------------------------------------
# Dependencies and locks


class KernelVersion:
    """What a kernel dependency is pinned to: `KernelVersion.Version(n)` (the v<n> branch) or
    `KernelVersion.Revision(rev)`."""

    __slots__ = ()

    def _order(self) -> tuple:
        raise NotImplementedError


@dataclass(frozen=True)
class _KernelVersionVersion(KernelVersion):
    version: int

    def _order(self) -> tuple:
        return (0, self.version, "")

    def __repr__(self) -> str:
        return f"KernelVersion.Version(version={self.version})"


@dataclass(frozen=True)
class _KernelVersionRevision(KernelVersion):
    revision: str

    def _order(self) -> tuple:
        return (1, 0, self.revision)

    def __repr__(self) -> str:
        return f"KernelVersion.Revision(revision={json.dumps(self.revision)})"


_KernelVersionVersion.__name__ = _KernelVersionVersion.__qualname__ = "Version"
_KernelVersionRevision.__name__ = _KernelVersionRevision.__qualname__ = "Revision"
KernelVersion.Version = _KernelVersionVersion
KernelVersion.Revision = _KernelVersionRevision


@dataclass(frozen=True)
class KernelDependency:
    """A dependency on another kernel: its repository and version or revision."""

    repo_id: str
    version: KernelVersion

    def __repr__(self) -> str:
        return f"KernelDependency(repo_id={json.dumps(self.repo_id)}, version={self.version!r})"

    def _order(self) -> tuple:
        return (self.repo_id, self.version._order())

    def _as_tuple(self) -> tuple[str, Optional[int], Optional[str]]:
        if isinstance(self.version, KernelVersion.Version):
            return self.repo_id, self.version.version, None
        return self.repo_id, None, self.version.revision

    def _json(self) -> dict:
        repo_id, version, revision = self._as_tuple()
        return ({"repo-id": repo_id, "version": version} if version is not None
                else {"repo-id": repo_id, "revision": revision})


def _dependency(repo_id: str, version: Optional[int], revision: Optional[str]) -> KernelDependency:
    return KernelDependency(repo_id, KernelVersion.Version(version) if version is not None
                            else KernelVersion.Revision(revision))


def _dependency_from_json(value) -> KernelDependency:
    if not isinstance(value, dict) or not isinstance(value.get("repo-id"), str):
        raise ValueError(f"invalid dependency {value!r}: expected an object with \"repo-id\"")
    keys = set(value) - {"repo-id"}
    if keys == {"version"} and isinstance(value["version"], int) and value["version"] >= 0:
        return _dependency(value["repo-id"], value["version"], None)
    if keys == {"revision"} and isinstance(value["revision"], str):
        return _dependency(value["repo-id"], None, value["revision"])
    raise ValueError(f"invalid dependency {value!r}: expected exactly one of \"version\" "
                     "(a number) or \"revision\" (a string)")


def _loads(s: str):
    try:
        return json.loads(s)
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON: {error}") from None


def _only_keys(value, keys: set[str], what: str) -> dict:
    if not isinstance(value, dict) or set(value) != keys:
        raise ValueError(f"invalid {what} {value!r}: expected exactly the keys "
                         f"{', '.join(sorted(keys))}")
    return value


class KernelLock:
    """A locked kernel revision: the commit, a full git object id (kept lowercase)."""

    __slots__ = ("_commit",)

    def __init__(self, commit: str):
        self._commit = _kernelhub.data_git_oid(commit)

    @property
    def commit(self) -> str:
        return self._commit

    @staticmethod
    def from_json(s: str) -> "KernelLock":
        value = _only_keys(_loads(s), {"commit"}, "kernel lock")
        return KernelLock(value["commit"])

    def to_json(self) -> str:
        return json.dumps({"commit": self._commit}, indent=2)

    def __repr__(self) -> str:
        return f"KernelLock(commit={json.dumps(self._commit)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelLock) and self._commit == other._commit

    def __hash__(self) -> int:
        return hash(self._commit)


class NixKernelLock:
    """A locked kernel revision with the SRI hash of its Nix output path."""

    __slots__ = ("_commit", "_hash")

    def __init__(self, commit: str, hash: str):
        self._commit = _kernelhub.data_git_oid(commit)
        self._hash = hash

    @property
    def commit(self) -> str:
        return self._commit

    @property
    def hash(self) -> str:
        return self._hash

    @staticmethod
    def from_json(s: str) -> "NixKernelLock":
        return NixKernelLock._from_value(_loads(s))

    @staticmethod
    def _from_value(value) -> "NixKernelLock":
        value = _only_keys(value, {"commit", "hash"}, "Nix kernel lock")
        if not isinstance(value["hash"], str):
            raise ValueError(f"invalid Nix kernel lock {value!r}: \"hash\" must be a string")
        return NixKernelLock(value["commit"], value["hash"])

    def _json(self) -> dict:
        return {"commit": self._commit, "hash": self._hash}

    def to_json(self) -> str:
        return json.dumps(self._json(), indent=2)

    def __repr__(self) -> str:
        return f"NixKernelLock(commit={json.dumps(self._commit)}, hash={json.dumps(self._hash)})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NixKernelLock)
                and (self._commit, self._hash) == (other._commit, other._hash))

    def __hash__(self) -> int:
        return hash((self._commit, self._hash))


class _DependencyMap:
    """A read-only mapping from KernelDependency, iterated in the reference's order (repo id,
    then versions before revisions)."""

    __slots__ = ("_items",)
    _value_name = "value"

    def __init__(self, items: dict):
        for dependency in items:
            if not isinstance(dependency, KernelDependency):
                raise TypeError(f"keys must be KernelDependency, not {type(dependency).__name__}")
        self._items = dict(sorted(((d, self._value(v)) for d, v in items.items()),
                                  key=lambda item: item[0]._order()))

    @staticmethod
    def _value(value):
        return value

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, dependency: KernelDependency):
        return self._items[dependency]

    def __contains__(self, dependency: object) -> bool:
        return isinstance(dependency, KernelDependency) and dependency in self._items

    def __iter__(self) -> Iterator[KernelDependency]:
        return iter(list(self._items))

    def get(self, dependency: KernelDependency, default=None):
        if not isinstance(dependency, KernelDependency):
            return default
        return self._items.get(dependency, default)

    def keys(self) -> list[KernelDependency]:
        return list(self._items)

    def values(self) -> list:
        return list(self._items.values())

    def items(self) -> list[tuple]:
        return list(self._items.items())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._items == other._items

    def __hash__(self) -> int:
        return hash(tuple(self._items.items()))

    def __repr__(self) -> str:
        entries = ", ".join(f"{d!r}: {v!r}" for d, v in self._items.items())
        return f"{type(self).__name__}({{{entries}}})"

    def _entries_json(self) -> list[dict]:
        return [{"dependency": d._json(), self._value_name: self._value_json(v)}
                for d, v in self._items.items()]

    @staticmethod
    def _value_json(value):
        return value

    @classmethod
    def _entries_from_json(cls, s: str) -> list[tuple[KernelDependency, object]]:
        value = _loads(s)
        if not isinstance(value, list):
            raise ValueError("expected a JSON array of {\"dependency\", \"%s\"} entries"
                             % cls._value_name)
        entries, seen = [], set()
        for index, entry in enumerate(value):
            entry = _only_keys(entry, {"dependency", cls._value_name}, f"entry [{index}]")
            dependency = _dependency_from_json(entry["dependency"])
            if dependency in seen:
                raise ValueError(f"entry [{index}]: duplicate dependency: {dependency!r}")
            seen.add(dependency)
            entries.append((dependency, entry[cls._value_name]))
        return entries


class KernelLocks(_DependencyMap):
    """The locks of a kernels.lock: a read-only mapping from KernelDependency to KernelLock."""

    __slots__ = ()
    _value_name = "lock"

    def __init__(self, locks: dict):
        for lock in locks.values():
            if not isinstance(lock, KernelLock):
                raise TypeError(f"values must be KernelLock, not {type(lock).__name__}")
        super().__init__(locks)

    @staticmethod
    def from_json(s: str) -> "KernelLocks":
        """Reads the dependency format of kernels.lock with the loader's reader (duplicate
        dependencies, unknown keys and abbreviated commits are errors)."""
        entries = _kernelhub.read_kernel_lock(s, "kernels.lock")
        if any(entry["version"] is None and entry["revision"] is None for entry in entries):
            raise ValueError("kernels.lock: the legacy format (repo_id, sha, variants) is not "
                             "a KernelLocks collection")
        return KernelLocks({_dependency(e["repo_id"], e["version"], e["revision"]):
                            KernelLock(e["commit"]) for e in entries})

    def to_json(self) -> str:
        return _kernelhub.data_render_kernel_locks(
            [(*dependency._as_tuple(), lock.commit) for dependency, lock in self._items.items()])


class NixKernelLocks(_DependencyMap):
    """Nix kernel locks: a read-only mapping from KernelDependency to NixKernelLock."""

    __slots__ = ()
    _value_name = "lock"

    def __init__(self, locks: dict):
        for lock in locks.values():
            if not isinstance(lock, NixKernelLock):
                raise TypeError(f"values must be NixKernelLock, not {type(lock).__name__}")
        super().__init__(locks)

    @staticmethod
    def _value_json(value):
        return value._json()

    @staticmethod
    def from_json(s: str) -> "NixKernelLocks":
        return NixKernelLocks({dependency: NixKernelLock._from_value(lock)
                               for dependency, lock in NixKernelLocks._entries_from_json(s)})

    def to_json(self) -> str:
        return json.dumps(self._entries_json(), indent=2)


class KernelPaths(_DependencyMap):
    """Kernel paths: a read-only mapping from KernelDependency to pathlib.Path."""

    __slots__ = ()
    _value_name = "path"

    @staticmethod
    def _value(value):
        return Path(value)

    @staticmethod
    def _value_json(value):
        return str(value)

    @staticmethod
    def from_json(s: str) -> "KernelPaths":
        entries = KernelPaths._entries_from_json(s)
        for dependency, path in entries:
            if not isinstance(path, str):
                raise ValueError(f"invalid path {path!r} for {dependency!r}")
        return KernelPaths(dict(entries))

    def to_json(self) -> str:
        return json.dumps(self._entries_json(), indent=2)


# ------------------------------------------------------------------------------------------
# Digests


class DigestAlgorithm(enum.Enum):
    SHA256 = "SHA256"
    SHA512 = "SHA512"

    def __str__(self) -> str:
        return self.value.lower()

    def __repr__(self) -> str:
        return f"DigestAlgorithm.{self.name}"


class DigestViolation:
    """How a digest deviates from a reference digest: `DigestViolation.MissingFile(path)`,
    `.UnknownFile(path)`, `.HashMismatch(path, expected, got)`,
    `.AlgorithmMismatch(expected, got)`; `str()` gives the reference's wording."""

    __slots__ = ()
    _kind = ""

    def _text_args(self) -> tuple[str, str, str]:
        raise NotImplementedError

    def __str__(self) -> str:
        return _kernelhub.data_violation_text(self._kind, *self._text_args())


@dataclass(frozen=True)
class _MissingFile(DigestViolation):
    path: str
    _kind = "missing_file"

    def _text_args(self):
        return self.path, "", ""


@dataclass(frozen=True)
class _UnknownFile(DigestViolation):
    path: str
    _kind = "unknown_file"

    def _text_args(self):
        return self.path, "", ""


@dataclass(frozen=True)
class _HashMismatch(DigestViolation):
    path: str
    expected: str
    got: str
    _kind = "hash_mismatch"

    def _text_args(self):
        return self.path, self.expected, self.got


@dataclass(frozen=True)
class _AlgorithmMismatch(DigestViolation):
    expected: DigestAlgorithm
    got: DigestAlgorithm
    _kind = "algorithm_mismatch"

    def _text_args(self):
        return "", self.expected.value, self.got.value


for _cls, _name in ((_MissingFile, "MissingFile"), (_UnknownFile, "UnknownFile"),
                    (_HashMismatch, "HashMismatch"), (_AlgorithmMismatch, "AlgorithmMismatch")):
    _cls.__name__ = _name
    _cls.__qualname__ = f"DigestViolation.{_name}"
    setattr(DigestViolation, _name, _cls)


class DigestValidationError(Exception):
    """Raised by `Digest.validate`; `str` lists every violation, `violations` holds them."""

    def __init__(self, message: str, violations: Optional[list[DigestViolation]] = None):
        super().__init__(message)
        self.violations = list(violations or [])


def _violation(kind: str, path: str, expected: str, got: str) -> DigestViolation:
    if kind == "missing_file":
        return DigestViolation.MissingFile(path)
    if kind == "unknown_file":
        return DigestViolation.UnknownFile(path)
    if kind == "hash_mismatch":
        return DigestViolation.HashMismatch(path, expected, got)
    return DigestViolation.AlgorithmMismatch(DigestAlgorithm(expected.upper()),
                                             DigestAlgorithm(got.upper()))


class Digest:
    """A variant's digest: the algorithm and {relative path: base64 hash}."""

    __slots__ = ("_algorithm", "_files")

    def __init__(self, algorithm: DigestAlgorithm, files: dict[str, str]):
        self._algorithm = algorithm
        self._files = dict(sorted(files.items()))

    @staticmethod
    def hash_variant(algorithm: DigestAlgorithm, variant_path: os.PathLike | str) -> "Digest":
        """Hashes every file of `variant_path` as kernel-builder does (OSError when a file
        cannot be read or the folder walked)."""
        return Digest(algorithm, _kernelhub.data_hash_variant(str(algorithm), Path(variant_path)))

    @property
    def algorithm(self) -> DigestAlgorithm:
        return self._algorithm

    @property
    def files(self) -> dict[str, str]:
        return dict(self._files)

    def validate(self, other: "Digest") -> None:
        """Returns when `other` (actual) matches this digest (expected); otherwise raises
        DigestValidationError with every violation."""
        found, message = _kernelhub.data_validate_digest(
            str(self._algorithm), self._files, str(other._algorithm), other._files)
        if found:
            raise DigestValidationError(message, [_violation(*entry[:4]) for entry in found])

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Digest)
                and (self._algorithm, self._files) == (other._algorithm, other._files))

    def __hash__(self) -> int:
        return hash((self._algorithm, tuple(self._files.items())))

    def __repr__(self) -> str:
        return f"Digest(algorithm={self._algorithm!r}, files={self._files!r})"


# ------------------------------------------------------------------------------------------
# Provenance, metadata.json and build.toml


@dataclass(frozen=True)
class GitStatus:
    """The state of a git working tree: HEAD and whether tracked files were changed."""

    commit: str
    dirty: bool

    def __repr__(self) -> str:
        return f"GitStatus(commit={json.dumps(self.commit)}, dirty={str(self.dirty).lower()})"


@dataclass(frozen=True)
class KernelBuilderVersion:
    """The kernel-builder that produced a build: its version and, when known, its git state."""

    version: str
    git: Optional[GitStatus] = None

    def __repr__(self) -> str:
        return f"KernelBuilderVersion(version={json.dumps(self.version)}, git={self.git!r})"


@dataclass(frozen=True)
class Provenance:
    """Where a build came from: the kernel-builder, and the kernel source's git state."""

    kernel_builder: KernelBuilderVersion
    kernel: Optional[GitStatus] = None

    @property
    def dirty(self) -> bool:
        """Whether the kernel-builder or the kernel source had uncommitted changes."""
        builder = self.kernel_builder.git
        return bool((builder is not None and builder.dirty)
                    or (self.kernel is not None and self.kernel.dirty))

    def __repr__(self) -> str:
        return f"Provenance(kernel_builder={self.kernel_builder!r}, kernel={self.kernel!r})"


def _git_status(value: Optional[dict]) -> Optional[GitStatus]:
    if not value or "commit" not in value:
        return None
    return GitStatus(value["commit"], bool(value.get("dirty", False)))


class Metadata:
    """A variant's parsed metadata.json (validated by the core, as the loader reads it)."""

    __slots__ = ("id", "name", "version", "kernels_minver", "license", "upstream", "source",
                 "python_depends", "kernel_depends", "backend", "digest", "provenance", "_text")

    @staticmethod
    def read_from_file(metadata_path: os.PathLike | str) -> "Metadata":
        """Parses metadata.json at `metadata_path`: OSError when it cannot be read,
        ValueError when it does not parse."""
        path = Path(metadata_path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise type(error)(error.errno, f"Failed to open `{path}`: {error.strerror}",
                              str(path)) from None
        return Metadata._parse(data, str(path))

    @staticmethod
    def from_bytes(bytes: bytes) -> "Metadata":
        """Parses metadata.json from its bytes (ValueError when it does not parse)."""
        return Metadata._parse(bytes, "metadata.json")

    @staticmethod
    def _parse(data: bytes, file_name: str) -> "Metadata":
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"Cannot parse metadata: {file_name} is not UTF-8: {error}") from None
        canonical, upstream, source = _kernelhub.parse_metadata(text, file_name)
        raw = json.loads(text)
        minver = raw.get("kernels-minver")
        metadata = object.__new__(Metadata)
        value = json.loads(canonical)
        set_ = object.__setattr__
        set_(metadata, "_text", text)  # as read, for code that needs the file itself
        set_(metadata, "id", value["id"])
        set_(metadata, "name", KernelName(value["name"]))
        set_(metadata, "version", value.get("version"))
        try:
            set_(metadata, "kernels_minver",
                 Version.from_str(minver) if isinstance(minver, str) else None)
        except ValueError as error:
            raise ValueError(f"Cannot parse metadata: kernels-minver: {error}") from None
        if minver is not None and not isinstance(minver, str):
            raise ValueError("Cannot parse metadata: kernels-minver: expected a version string")
        set_(metadata, "license", value.get("license"))
        set_(metadata, "upstream", upstream)
        set_(metadata, "source", source)
        set_(metadata, "python_depends", list(value.get("python-depends", [])))
        set_(metadata, "kernel_depends",
             [_dependency_from_json(dep) for dep in value.get("kernel-depends", [])])
        backend = value["backend"]
        set_(metadata, "backend", BackendInfo(Backend.from_str(backend["type"]),
                                              backend.get("archs")))
        digest = value.get("digest")
        set_(metadata, "digest", Digest(DigestAlgorithm(digest["algorithm"].upper()),
                                        digest["files"]) if digest else None)
        provenance = value.get("provenance")
        if provenance:
            builder = provenance.get("kernel-builder", {})
            set_(metadata, "provenance", Provenance(
                KernelBuilderVersion(builder.get("version", ""), _git_status(builder)),
                _git_status(provenance.get("kernel"))))
        else:
            set_(metadata, "provenance", None)
        return metadata

    def __setattr__(self, name, value):
        raise AttributeError(f"Metadata is immutable: cannot set {name!r}")

    def __repr__(self) -> str:
        return (f"Metadata(id={self.id}, name={self.name!r}, version={self.version!r}, "
                f"kernels_minver={self.kernels_minver!r}, license={self.license!r}, "
                f"upstream={self.upstream!r}, source={self.source!r}, "
                f"python_depends={self.python_depends!r}, kernel_depends={self.kernel_depends!r}, "
                f"backend={self.backend!r}, digest={self.digest!r}, "
                f"provenance={self.provenance!r})")


@dataclass(frozen=True)
class General:
    """build.toml's [general] as far as loaders need it: the backends the kernel supports."""

    backends: list[Backend] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"General(backends={self.backends!r})"


class Build:
    """A kernel's build.toml, read and validated by kernel-builder's reader (any edition)."""

    __slots__ = ("_general", "_depends", "_backend_depends")

    @staticmethod
    def open(kernel_dir: os.PathLike | str) -> "Build":
        """Reads `kernel_dir`/build.toml (ValueError naming every problem)."""
        read = _kernelhub.data_read_build(Path(kernel_dir))
        build = object.__new__(Build)
        build._general = General([Backend.from_str(name) for name in read["backends"]])
        build._depends = [_dependency(*dep) for dep in read["kernel_depends"]]
        build._backend_depends = {Backend.from_str(name): [_dependency(*dep) for dep in deps]
                                  for name, deps in read["backend_kernel_depends"].items()}
        return build

    @property
    def general(self) -> General:
        return self._general

    def all_kernel_depends(self, backend: Backend) -> list[KernelDependency]:
        """[general] kernel-depends, then those of [general.<backend>]."""
        return list(self._depends) + list(self._backend_depends.get(backend, []))

    def __repr__(self) -> str:
        return f"Build(general={self._general!r})"
