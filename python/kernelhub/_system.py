# SPDX-License-Identifier: Apache-2.0
"""What this process runs on, asked once: the same probe the C++ detection runs in a child
interpreter (_system_probe.py), run here in-process so torch is imported only once."""

import functools
import json

from . import _system_probe


@functools.lru_cache(maxsize=1)
def probe_json() -> str:
    return json.dumps(_system_probe.probe())


def device_arch() -> tuple[tuple[int, int] | None, str | None]:
    """The visible GPU's CUDA capability or ROCm arch (feature flags stripped), if any."""
    try:
        import torch
    except ImportError:
        return None, None
    try:
        if not torch.cuda.is_available():
            return None, None
        if torch.version.hip is not None:
            name = torch.cuda.get_device_properties(torch.cuda.current_device()).gcnArchName
            return None, name.split(":")[0]
        if torch.version.cuda is not None:
            return tuple(torch.cuda.get_device_capability()), None
    except Exception:  # a broken driver must not make loading impossible
        return None, None
    return None, None
