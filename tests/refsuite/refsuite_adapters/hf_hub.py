# SPDX-License-Identifier: Apache-2.0
"""`kernels.hf_hub`: the Hub client settings and the loaded-kernel origin.

- `_get_hf_api(user_agent)`: a huggingface_hub `HfApi` carrying the User-Agent kernelhub sends
  (`kernelhub._hub.user_agent_text`, after kernelhub's product token; nothing when telemetry
  is disabled).
- `_platform()`: the platform field of that User-Agent.
- `RepoInfo`: `kernelhub.RepoInfo`.
- `CACHE_DIR`: KERNELS_CACHE, which kernelhub's cache honours the same way.
"""
from __future__ import annotations

import os
import platform

from huggingface_hub import HfApi

import kernelhub
from kernelhub import RepoInfo, _hub

__all__ = ["CACHE_DIR", "RepoInfo", "_get_hf_api", "_platform"]

CACHE_DIR: str | None = os.environ.get("KERNELS_CACHE", None)


def _platform() -> str:
    field = next(part for part in _hub.user_agent_text(None).split("; ")
                 if part.startswith("platform/")) if _hub.user_agent_text(None) else None
    if field is not None:
        return field[len("platform/"):]
    return f"{platform.machine()}-{platform.system().lower()}"


def _get_hf_api(user_agent: str | dict | None = None) -> HfApi:
    text = _hub.user_agent_text(user_agent)
    agent = f"kernelhub/{kernelhub.__version__}; {text}" if text else ""
    return HfApi(library_name="kernelhub", library_version=kernelhub.__version__,
                 user_agent=agent)
