# SPDX-License-Identifier: Apache-2.0
"""kernels.lock for the locked repositories and loaders: which lock, and which entry.

`KernelLocks` is plain data (hashable, comparable and deep-copyable): kernels' Rust object
cannot be deep-copied, which breaks an inheriting `use_kernel_mapping` once a locked
repository is mapped; ours can.
"""

from __future__ import annotations

import sys
from pathlib import Path
from collections import namedtuple

from . import _kernelhub

# Named tuples and a slotted class, not frozen dataclasses: a load by lock defines these on its
# first use (the package does not import this module), and the three dataclasses took ~0.9 ms
# to define (their methods are generated and compiled), more than half a cached load; typing's
# NamedTuple with these annotations costs more still (each annotation becomes a ForwardRef).

LockedDependency = namedtuple("LockedDependency", ("repo_id", "version", "revision"),
                              defaults=(None, None), module=__name__)
LockedDependency.__doc__ = ("A lock entry's dependency: the repo id and the version or "
                            "revision it was locked for.")

Lock = namedtuple("Lock", ("commit",), module=__name__)
Lock.__doc__ = "What a lock entry pins: the commit."


class KernelLocks:
    """Every entry of one kernels.lock, in file order: a read-only mapping from the locked
    dependency to its `Lock`, as kernels' KernelLocks is read (`locks[dep].commit`)."""

    __slots__ = ("entries",)
    entries: tuple[tuple[LockedDependency, str], ...]

    def __init__(self, entries: tuple[tuple[LockedDependency, str], ...]):
        object.__setattr__(self, "entries", tuple(entries))

    def __setattr__(self, name, value):
        raise AttributeError(f"KernelLocks is read-only: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"KernelLocks is read-only: cannot delete {name!r}")

    def __eq__(self, other) -> bool:
        return isinstance(other, KernelLocks) and self.entries == other.entries

    def __hash__(self) -> int:
        return hash(self.entries)

    def __repr__(self) -> str:
        return f"KernelLocks(entries={self.entries!r})"

    def __reduce__(self):  # copy, deepcopy and pickle: rebuilt through __init__
        return KernelLocks, (self.entries,)

    @staticmethod
    def parse(text: str, file_name: str) -> "KernelLocks":
        return KernelLocks(tuple(
            (LockedDependency(e["repo_id"], e["version"], e["revision"]), e["commit"])
            for e in _kernelhub.read_kernel_lock(text, file_name)))

    def __getitem__(self, dependency: LockedDependency) -> Lock:
        for locked, commit in self.entries:
            if locked == dependency:
                return Lock(commit)
        raise KeyError(dependency)

    def __contains__(self, dependency) -> bool:
        return any(locked == dependency for locked, _commit in self.entries)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.entries)

    def keys(self) -> list[LockedDependency]:
        return [locked for locked, _commit in self.entries]

    def values(self) -> list[Lock]:
        return [Lock(commit) for _locked, commit in self.entries]

    def items(self) -> list[tuple[LockedDependency, Lock]]:
        return [(locked, Lock(commit)) for locked, commit in self.entries]

    def first(self, repo_id: str) -> LockedDependency | None:
        for dependency, _commit in self.entries:
            if dependency.repo_id == repo_id:
                return dependency
        return None

    def find_exact(self, repo_id: str, version: int | None,
                   revision: str | None) -> str | None:
        """The commit of the entry locked for exactly this dependency spec."""
        for locked, commit in self.entries:
            if (locked.repo_id, locked.version, locked.revision) == (repo_id, version, revision):
                return commit
        return None


def _not_locked(repo_id: str) -> ValueError:
    return ValueError(f"Kernel `{repo_id}` is not locked. Please lock it with `kernels lock "
                      "<project>` and then reinstall the project.")


def caller_lock_text() -> tuple[str, str]:
    """kernels.lock from the distribution of the first caller outside kernelhub. The reference
    means to do this but stops at its own frames and never finds a user's lock (layers.md §7.4);
    skipping every kernelhub frame is the fix."""
    import importlib.metadata  # ~5 ms, paid only by lock lookups

    frame = sys._getframe(1)  # inspect.stack() would read every frame's source file
    while frame is not None:
        name = frame.f_globals.get("__name__")
        frame = frame.f_back
        if not name or name == "kernelhub" or name.startswith("kernelhub."):
            continue
        package = name.split(".")[0]
        for dist_name in importlib.metadata.packages_distributions().get(package, []):
            text = importlib.metadata.distribution(dist_name).read_text("kernels.lock")
            if text is not None:
                return text, f"kernels.lock of the {dist_name} distribution"
        break
    raise ValueError(
        "Could not find a `kernels.lock` file in the caller's package metadata. Please lock "
        "kernels with `kernels lock <project>` and then reinstall the project.")


def read_locks(lockfile: Path | str | None) -> KernelLocks:
    if lockfile is None:
        text, name = caller_lock_text()
    else:
        text, name = Path(lockfile).read_text(), str(lockfile)
    return KernelLocks.parse(text, name)


def find_locked(repo_id: str, lockfile: Path | str | None) -> tuple[KernelLocks, LockedDependency]:
    locks = read_locks(lockfile)
    dependency = locks.first(repo_id)
    if dependency is None:
        raise _not_locked(repo_id)
    return locks, dependency


def write_egg_lockfile(cmd, basename: str, filename: str) -> None:
    """setuptools' `egg_info.writers` hook for `kernels.lock`: a project whose pyproject.toml
    declares `[tool.kernels.dependencies]` gets its kernels.lock copied into its distribution's
    metadata (where `caller_lock_text` finds it). Without a kernels.lock it warns and removes a
    stale copy, so an editable install does not keep an old lock."""
    import logging

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    pyproject = Path.cwd() / "pyproject.toml"
    if not pyproject.exists():
        return
    with pyproject.open("rb") as handle:
        declared = tomllib.load(handle).get("tool", {}).get("kernels", {}).get("dependencies")
    if declared is None:
        return
    lock = Path.cwd() / "kernels.lock"
    if lock.exists():
        text = lock.read_text()
    else:
        logging.getLogger("kernelhub.locking").warning(f"Lock file {lock} does not exist")
        text = None
    cmd.write_or_delete_file(basename, filename, text)
