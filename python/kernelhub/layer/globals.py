# SPDX-License-Identifier: Apache-2.0
"""The current kernel mapping and the DISABLE_KERNEL_MAPPING switch (layers.md §5.1).

A context that set its own mapping (`use_kernel_mapping`, `register_kernel_mapping(...,
inherit_mapping=False)`) sees that one; every other context, in every thread, sees the shared
process-wide mapping that top-level `register_kernel_mapping` calls fill (what transformers
does at import, in whichever thread imports it). kernels mutates that shared dict in place, so
a registration in one thread races with a kernelize, or with the deep copy of a
`use_kernel_mapping`, in another ("dictionary changed size during iteration"), and a context
that captured the mapping sees later changes. Here the shared mapping is copy-on-write: a
registration builds a new mapping under a lock and publishes it in one assignment, so readers
always see a whole mapping and never need the lock.
"""

import os
import threading
from contextvars import ContextVar

from .repos import DeviceRepos

# Read once at import; a non-integer value fails the import, as in kernels.
_DISABLE_KERNEL_MAPPING: bool = bool(int(os.environ.get("DISABLE_KERNEL_MAPPING", "0")))

Mapping = dict[str, dict[str, DeviceRepos]]

# The mapping this context set for itself; None: the shared mapping applies.
_KERNEL_MAPPING: ContextVar[Mapping | None] = ContextVar("_KERNEL_MAPPING", default=None)

_shared_mapping: Mapping = {}
_shared_lock = threading.Lock()


def current_mapping() -> Mapping:
    mapping = _KERNEL_MAPPING.get()
    return _shared_mapping if mapping is None else mapping


def update_shared_mapping(update) -> None:
    """Applies `update(mapping)` to a copy of the shared mapping and publishes the copy, also
    when `update` raises (kernels keeps what a failed registration had added, so we do too)."""
    global _shared_mapping
    with _shared_lock:
        copy = {name: {device: repos.copy() for device, repos in entry.items()}
                for name, entry in _shared_mapping.items()}
        try:
            update(copy)
        finally:
            _shared_mapping = copy
