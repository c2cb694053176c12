# SPDX-License-Identifier: Apache-2.0
"""What this process runs on, asked once: the same probe the C++ detection runs in a child
interpreter (_system_probe.py), run here in-process so torch is imported only once."""

import json

from . import _system_probe


# The probe's answer by whether it says if the backend has a device.
_probes: dict[bool, dict] = {}


def probe(device: bool = True) -> dict:
    """The probe's answer, for the core's `probe_json` arguments as it is (shared: not to be
    changed): a dict costs the core no JSON text to parse, and this process no text to write.
    `device=False` is for callers with no use for whether torch's backend has a device (a
    backend was asked for by name, the user agent, python-depends): the probe then skips
    `torch.cuda.is_available()`, whose first call in a process costs about 0.2 ms (a CUDA build
    of torch looks for the driver). An answer with the device fact serves both kinds of
    caller."""
    found = _probes.get(True) or (None if device else _probes.get(False))
    if found is None:
        found = _probes[device] = _system_probe.probe(device=device)
    return found


def probe_json(device: bool = True) -> str:
    """probe() as the JSON text the child interpreter's probe prints."""
    return json.dumps(probe(device))


def needs_device(backend: str | None) -> bool:
    """Whether a load with `backend` (None: the one torch was built for) depends on there
    being a device: only when none was asked for, as a CUDA torch on a machine without a GPU
    then prefers a cpu variant."""
    return backend is None


def arch_matters(backend: str | None) -> bool:
    """Whether the GPU's arch can decide between variants of `backend`: CUDA capabilities and
    ROCm archs only (None: torch's own backend, which may be either)."""
    return backend in (None, "cuda", "rocm")


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
