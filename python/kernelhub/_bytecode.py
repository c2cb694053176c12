# SPDX-License-Identifier: Apache-2.0
"""Bytecode the loader compiled itself, kept in this user's state folder.

A variant's modules are compiled from their sources (the digest covers sources, never bytecode:
see _loader.py), which costs a compile per module per process. The code objects are kept here,
each under the BLAKE2b-256 hash of what was compiled (the path it names, the optimisation level
and the source bytes just read), so a source that changed, or the same source at another path,
is compiled anew, and a kept file can only ever stand for the exact source it was made from.

The folder is $XDG_STATE_HOME/kernelhub/bytecode/<cache tag> (or ~/.local/state/...), outside
the kernel cache: whoever can write a shared cache must not be able to choose what runs. It is
used only while it, and the kernelhub folder above it, belong to this user and nobody else can
write them; every kept file is opened without following links and read only when it is this
user's and written by nobody else. Anything wrong (no HOME, a foreign or open folder, a
truncated or stale file) falls back to compiling: the cache can make a load faster, never fail
it. New files are written to a temporary name and renamed into place, so processes loading at
once see whole files or none. KERNELHUB_BYTECODE_CACHE=0 turns the cache off. Python's
PYTHONDONTWRITEBYTECODE does not: it is about __pycache__ folders beside the sources (container
images set it to keep them out of their layers), and this cache writes none.
"""

import functools
import hashlib
import importlib.util
import marshal
import os
import stat
import sys
from types import CodeType

# Version 2: files named by BLAKE2b-256 (version 1: SHA-256).
_FORMAT = b"kernelhub-bytecode-2\0"
_HEADER = importlib.util.MAGIC_NUMBER + _FORMAT


def _state_root() -> str | None:
    state = os.environ.get("XDG_STATE_HOME", "")
    if os.path.isabs(state):
        return os.path.join(state, "kernelhub")
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return os.path.join(home, ".local", "state", "kernelhub")
    return None


def _private_folder(path: str) -> bool:
    """A real folder (not a link) of this user's that nobody else can write."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


@functools.lru_cache(maxsize=1)
def _folder() -> str | None:
    """The cache folder, made private where missing; None where it cannot be trusted."""
    root = _state_root()
    setting = os.environ.get("KERNELHUB_BYTECODE_CACHE", "").strip().lower()
    off = setting in ("0", "false", "no", "off")
    if off or root is None or sys.implementation.cache_tag is None:
        return None
    folder = os.path.join(root, "bytecode", sys.implementation.cache_tag)
    checked = (root, os.path.join(root, "bytecode"), folder)
    if all(_private_folder(path) for path in checked):
        return folder  # the usual case: three lstat calls, no makedirs and its exception
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return folder if all(_private_folder(path) for path in checked) else None


def _key(source: bytes, path: str) -> str:
    # BLAKE2b is as collision-resistant as SHA-256 and built into CPython: the first SHA-256
    # of a process fetches OpenSSL's implementation (about 50 us here, a tenth of a warm load's
    # own work), BLAKE2b's first costs about 15.
    digest = hashlib.blake2b(_FORMAT, digest_size=32)
    digest.update(f"{sys.flags.optimize}\0{path}\0".encode("utf-8", "surrogateescape"))
    digest.update(source)
    return digest.hexdigest()


def _read(file: str) -> CodeType | None:
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid()
                or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        # os.read, not a buffered stream: no stream object, and three system calls fewer.
        # One byte past the size, so a file that grew since the fstat reads as damaged.
        data = os.read(fd, info.st_size + 1)
        if len(data) != info.st_size:
            return None
    finally:
        os.close(fd)
    if not data.startswith(_HEADER):
        return None
    try:
        code = marshal.loads(memoryview(data)[len(_HEADER):])
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _write(file: str, code: CodeType) -> None:
    temporary = f"{file}.{os.getpid()}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(_HEADER + marshal.dumps(code))
        os.replace(temporary, file)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def compile_source(source: bytes, path: str) -> CodeType:
    """What compile(source, path, "exec") gives, from the kept bytecode when there is some."""
    folder = _folder()
    if folder is None:
        return compile(source, path, "exec", dont_inherit=True)
    file = os.path.join(folder, _key(source, path))
    code = _read(file)
    if code is None:
        code = compile(source, path, "exec", dont_inherit=True)
        _write(file, code)
    return code
