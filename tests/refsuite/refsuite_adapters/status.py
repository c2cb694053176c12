# SPDX-License-Identifier: Apache-2.0
"""`kernels.status`: kernel-status.toml, where a repository says it moved.

- `KernelStatus.from_toml(text)`: the loader's reader, `loader::parse_kernel_status`
  (`_kernelhub.parse_kernel_status`), with the reference's errors; a redirect is `Redirect`.
- `resolve_status(api, repo_id, revision)`: kernel-status.toml fetched with the caller's `api`
  and read by the same parser; no file means no status, as in kernelhub's loader
  (`loader::fetch_kernel_status`).
"""
from __future__ import annotations

from dataclasses import dataclass

from kernelhub import _kernelhub


@dataclass(frozen=True)
class Redirect:
    destination: str
    revision: str = "main"


class KernelStatus:
    @staticmethod
    def from_toml(content: str) -> Redirect:
        _kind, destination, revision = _kernelhub.parse_kernel_status(content)
        return Redirect(destination=destination, revision=revision)


def resolve_status(api, repo_id: str, revision: str) -> tuple[str, str]:
    from huggingface_hub.utils import EntryNotFoundError

    try:
        path = api.hf_hub_download(repo_id=repo_id, filename="kernel-status.toml",
                                   revision=revision, repo_type="kernel")
    except EntryNotFoundError:
        return repo_id, revision
    with open(path) as status_file:
        status = KernelStatus.from_toml(status_file.read())
    return status.destination, status.revision
