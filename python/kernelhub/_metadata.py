# SPDX-License-Identifier: Apache-2.0
"""`Metadata`: a variant's metadata.json as kernels' `Metadata` (kernels_data) presents it.

The C++ core validates the text (the rules and messages of kernels-data, `ValueError`
"Cannot parse metadata: ...") and returns it in canonical form; this module only builds the
result objects: `name` with `python_name`, `backend.backend_type`/`archs`, `digest`,
`provenance` with `dirty`, `kernel_depends` entries with `repo_id` and `version`.
"""


import enum
import json
from dataclasses import dataclass
from pathlib import Path

from . import _kernelhub


class KernelName(str):
    """A kernel name (`relu-fast`); `python_name` is the importable spelling (`relu_fast`)."""

    @property
    def python_name(self) -> str:
        return self.replace("-", "_")

    def __repr__(self) -> str:
        return f"KernelName({str(self)!r})"


class Backend(enum.Enum):
    CANN = "cann"
    CPU = "cpu"
    CUDA = "cuda"
    METAL = "metal"
    NEURON = "neuron"
    ROCM = "rocm"
    TPU = "tpu"
    XPU = "xpu"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class BackendInfo:
    backend_type: Backend
    archs: list[str] | None


class DigestAlgorithm(enum.Enum):
    SHA256 = "sha256"
    SHA512 = "sha512"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Digest:
    algorithm: DigestAlgorithm
    files: dict[str, str]


@dataclass(frozen=True)
class GitStatus:
    commit: str
    dirty: bool


@dataclass(frozen=True)
class KernelBuilderVersion:
    version: str
    git: GitStatus | None


@dataclass(frozen=True)
class Provenance:
    kernel_builder: KernelBuilderVersion
    kernel: GitStatus | None

    @property
    def dirty(self) -> bool:
        """The builder or the kernel had uncommitted changes."""
        builder = self.kernel_builder.git
        return bool((builder and builder.dirty) or (self.kernel and self.kernel.dirty))


class KernelVersion:
    """What a kernel dependency is pinned to: a version (a v<N> branch) or a revision."""

    @dataclass(frozen=True)
    class Version:
        version: int

    @dataclass(frozen=True)
    class Revision:
        revision: str


@dataclass(frozen=True)
class KernelDependency:
    repo_id: str
    version: KernelVersion.Version | KernelVersion.Revision

    def spec(self) -> tuple[str, int | None, str | None]:
        """(repo_id, version, revision): the key a lock matches dependencies on."""
        if isinstance(self.version, KernelVersion.Version):
            return self.repo_id, self.version.version, None
        return self.repo_id, None, self.version.revision


def _git_status(data: dict | None) -> GitStatus | None:
    if not data or "commit" not in data:
        return None
    return GitStatus(commit=data["commit"], dirty=bool(data.get("dirty", False)))


class Metadata:
    """A parsed metadata.json; `read_from_file(path)` and `from_bytes(data)` raise ValueError
    on a parse error, and `read_from_file` OSError on a file it cannot open, as kernels'
    Metadata does."""

    def __init__(self, data: dict):
        self.raw = data
        self.id: str = data["id"]
        self.name = KernelName(data["name"])
        self.version: int = data["version"]
        # Three parts, normalised by the core ("01.2.3" is "1.2.3").
        self.kernels_minver: str | None = data.get("kernels-minver")
        self.license: str = data["license"]
        self.upstream: str | None = data.get("upstream")
        self.source: str | None = data.get("source")
        self.python_depends: list[str] = list(data.get("python-depends", []))
        self.kernel_depends = [
            KernelDependency(dep["repo-id"],
                             KernelVersion.Version(dep["version"]) if "version" in dep
                             else KernelVersion.Revision(dep["revision"]))
            for dep in data.get("kernel-depends", [])
        ]
        backend = data["backend"]
        self.backend = BackendInfo(Backend(backend["type"]), backend.get("archs"))
        digest = data.get("digest")
        self.digest = (Digest(DigestAlgorithm(digest["algorithm"]), dict(digest["files"]))
                       if digest else None)
        provenance = data.get("provenance")
        if provenance:
            builder = provenance.get("kernel-builder", {})
            self.provenance = Provenance(
                KernelBuilderVersion(builder.get("version", ""), _git_status(builder)),
                _git_status(provenance.get("kernel")))
        else:
            self.provenance = None

    @staticmethod
    def from_bytes(data: bytes) -> "Metadata":
        text = data.decode() if isinstance(data, (bytes, bytearray)) else data
        return Metadata._parse(text, "metadata.json")

    @staticmethod
    def read_from_file(metadata_path) -> "Metadata":
        """OSError when the file cannot be opened, ValueError when it cannot be read or
        parsed: kernels' classes and texts."""
        path = Path(metadata_path)
        shown = f'`"{path}"`'  # the path as kernels (Rust's Debug) shows it
        try:
            # Python refuses to open a folder; kernels opens it and fails to read it.
            with open(path, "rb") as file:
                try:
                    data = file.read()
                except OSError as error:
                    raise ValueError(f"Cannot parse metadata from {shown}: {error.strerror} "
                                     f"(os error {error.errno})") from None
        except IsADirectoryError as error:
            raise ValueError(f"Cannot parse metadata from {shown}: {error.strerror} "
                             f"(os error {error.errno})") from None
        except OSError as error:
            raise OSError(f"Failed to open {shown}: {error.strerror} (os error {error.errno})"
                          ) from None
        try:
            text = data.decode()
        except UnicodeDecodeError as error:
            raise ValueError(f"Cannot parse metadata from {shown}: not UTF-8 ({error.reason} "
                             f"at byte {error.start})") from None
        return Metadata._parse(text, str(path))

    @staticmethod
    def from_json(text: str) -> "Metadata":
        """From JSON the core already validated (no second validation)."""
        return Metadata(json.loads(text))

    @staticmethod
    def _parse(text: str, file_name: str) -> "Metadata":
        canonical, upstream, source = _kernelhub.parse_metadata(text, file_name)
        metadata = Metadata(json.loads(canonical))
        metadata.upstream, metadata.source = upstream, source
        return metadata

    def __eq__(self, other):
        return isinstance(other, Metadata) and self.raw == other.raw

    def __repr__(self) -> str:
        return (f"Metadata(id={self.id}, name={self.name!r}, version={self.version}, "
                f"backend={self.backend})")
