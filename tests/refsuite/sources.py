# SPDX-License-Identifier: Apache-2.0
"""The reference's sources, fetched from the package registry at test time and cached under
build/refsuite/ (never committed): the `kernels` 0.17.2 sdist (its `kernels/tests`) and the
`kernels-data` 0.16.2 sdist (its `kernels-data/bindings/python/tests`).

`pip download --no-binary :all: kernels==0.17.2` cannot be used: pip prepares the metadata of
every sdist it downloads, and these are maturin (Rust) projects whose metadata step runs
`cargo metadata`, which needs crates.io. So the sdist is taken from the same index pip uses
(PIP_INDEX_URL, else pypi.org), through the index's JSON API (PEP 691), and checked against
the sha256 pinned here: a changed file on the index is an error, not a different suite.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import urllib.request
from pathlib import Path

# name, version, file name, sha256 of the sdist on PyPI
KERNELS = ("kernels", "0.17.2", "kernels-0.17.2.tar.gz",
           "42e4a5758d333c6b82abfc72daf37c690fd66591b8d9d8fc509e14fceff74d72")
KERNELS_DATA = ("kernels-data", "0.16.2", "kernels_data-0.16.2.tar.gz",
                "c45c88b8c49b8d8130615b5ea78b51621b5c5c94ea47c902d6002750abe6108a")


def _index_url() -> str:
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_url(project: str, file_name: str) -> str:
    request = urllib.request.Request(f"{_index_url()}/{project}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        listing = json.load(response)
    for entry in listing.get("files", []):
        if entry.get("filename") == file_name:
            return entry["url"]
    raise RuntimeError(f"{file_name} is not on the index {_index_url()}/{project}/")


def fetch_sdist(spec: tuple[str, str, str, str], cache: Path) -> Path:
    """The sdist file, from the cache when its hash matches, else downloaded into it."""
    project, _version, file_name, sha256 = spec
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / file_name
    if target.exists() and _sha256(target) == sha256:
        return target
    partial = target.with_name(target.name + ".partial")
    with urllib.request.urlopen(_file_url(project, file_name), timeout=120) as response, \
            partial.open("wb") as out:
        shutil.copyfileobj(response, out)
    got = _sha256(partial)
    if got != sha256:
        partial.unlink()
        raise RuntimeError(f"{file_name}: sha256 {got} from the index, expected {sha256}")
    partial.rename(target)
    return target


def unpack(sdist: Path, into: Path) -> Path:
    """The sdist unpacked under `into` (fresh each time: a stale tree must not mix in);
    returns its top folder."""
    top = into / sdist.name.removesuffix(".tar.gz")
    if top.exists():
        shutil.rmtree(top)
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    return top
