# SPDX-License-Identifier: Apache-2.0
"""The exception classes a kernels user catches: the core reports Hub failures as texts with a
Python class (OSError, FileNotFoundError, ValueError); a missing repository, revision or file
is re-raised as huggingface_hub's own error class when huggingface_hub is installed (through a
subclass, since its constructor wants an HTTP response we do not have), else as an OSError
subclass with the same message."""

from __future__ import annotations

import contextlib
import functools


@functools.lru_cache(maxsize=None)
def error_class(name: str) -> type:
    """huggingface_hub's `name` error class, subclassed so the core's message is enough to
    build one; an OSError subclass when huggingface_hub is not installed. Made on first use:
    importing huggingface_hub costs ~35 ms, which `import kernelhub` must not pay."""
    try:
        from huggingface_hub import errors as hf_errors
    except ImportError:
        hf_errors = None
    base = getattr(hf_errors, name, None) if hf_errors is not None else None
    if base is None:
        return type(name, (OSError,), {"__module__": "kernelhub"})

    def __init__(self, message: str):
        # HfHubHTTPError.__init__ reads an httpx response; the core has none to give.
        OSError.__init__(self, message)
        self.response = None
        self.server_message = None
        self.request_id = None

    def __str__(self):
        return self.args[0] if self.args else ""

    return type(name, (base,), {"__init__": __init__, "__str__": __str__,
                                "__module__": "kernelhub"})


# The labels hub/error_mapping.cpp puts in its messages, and the class each becomes.
_BY_LABEL = (
    (": repository not found", "RepositoryNotFoundError"),
    (": revision not found", "RevisionNotFoundError"),
)


@contextlib.contextmanager
def translate_errors(repo_id: str):
    try:
        yield
    except (OSError, ValueError) as error:
        message = str(error)
        for label, name in _BY_LABEL:
            if label in message:
                raise error_class(name)(message) from None
        raise
