# SPDX-License-Identifier: Apache-2.0
"""The current kernel mapping and the DISABLE_KERNEL_MAPPING switch (layers.md §5.1).

The mapping is a ContextVar whose default is one dict shared by every thread: a top-level
`register_kernel_mapping` (what transformers does at import) is seen everywhere, while
`use_kernel_mapping` scopes its mapping to the current context, as in kernels.
"""

import os
from contextvars import ContextVar

from .repos import DeviceRepos

# Read once at import; a non-integer value fails the import, as in kernels.
_DISABLE_KERNEL_MAPPING: bool = bool(int(os.environ.get("DISABLE_KERNEL_MAPPING", "0")))

_KERNEL_MAPPING: ContextVar[dict[str, dict[str, DeviceRepos]]] = ContextVar(
    "_KERNEL_MAPPING", default={})
