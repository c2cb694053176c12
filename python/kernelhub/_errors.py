# SPDX-License-Identifier: Apache-2.0
"""The exception classes a kernels user catches: the core reports Hub failures as texts with a
Python class (OSError, FileNotFoundError, ValueError); a missing repository, revision or file
is re-raised as huggingface_hub's own error class when huggingface_hub is installed (through a
subclass, since its constructor wants an HTTP response we do not have), else as an OSError
subclass with the same message."""

from __future__ import annotations

import contextlib

try:
    from huggingface_hub import errors as _hf_errors
except ImportError:  # huggingface_hub is optional for kernelhub
    _hf_errors = None


def _error_class(name: str, base_name: str, builtin: type) -> type:
    base = getattr(_hf_errors, base_name, None) if _hf_errors is not None else None
    if base is None:
        return type(name, (builtin,), {"__module__": __name__})

    def __init__(self, message: str):
        # HfHubHTTPError.__init__ reads an httpx response; the core has none to give.
        OSError.__init__(self, message)
        self.response = None
        self.server_message = None
        self.request_id = None

    def __str__(self):
        return self.args[0] if self.args else ""

    return type(name, (base,), {"__init__": __init__, "__str__": __str__,
                                "__module__": __name__})


RepositoryNotFoundError = _error_class("RepositoryNotFoundError", "RepositoryNotFoundError",
                                       OSError)
RevisionNotFoundError = _error_class("RevisionNotFoundError", "RevisionNotFoundError", OSError)

# The labels hub/error_mapping.cpp puts in its messages, and the class each becomes.
_BY_LABEL = (
    (": repository not found", RepositoryNotFoundError),
    (": revision not found", RevisionNotFoundError),
)


@contextlib.contextmanager
def translate_errors(repo_id: str):
    try:
        yield
    except (OSError, ValueError) as error:
        message = str(error)
        for label, cls in _BY_LABEL:
            if label in message:
                raise cls(message) from None
        raise
