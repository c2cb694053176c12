# SPDX-License-Identifier: Apache-2.0
"""The load examples a hub shows are right for that hub (issue 22 §8): every Python snippet of
a kernel's page, the card `kernel-builder upload` fills and the page's own "How to load it",
is taken from the page `kernelhub serve` renders and run as it is, for each kernel shape:
compiled ops built for cpu only, a noarch kernel, and kernels with layers (kernelize), for cpu
and cuda or for cpu only.

Each snippet runs in a fresh interpreter whose environment points HF_ENDPOINT at a closed port
on 127.0.0.1 and has an empty cache, so it loads only if it names this hub itself (and nothing
ever reaches another host); publisher trust and the backend must be right for it to load."""
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import VENV_BIN, copy_built, run, start_hub_server, stop_hub_server
from headless_browser import parse
from hub_cache_support import hub_env

TRUSTED_ORG = "trusted-team"
UNTRUSTED_ORG = "team"
CONFIG = f"[organizations.{TRUSTED_ORG}]\ntrustedKernelPublisher = true\n"

LAYERS_PY = '''"""The kernel's layers, for kernelize."""
import torch
from torch import nn

from . import silu_and_mul as _silu_and_mul


class SiluAndMul(nn.Module):
    can_torch_compile = True
    has_backward = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _silu_and_mul(x)
'''


@pytest.fixture(scope="module")
def hub(kernelhub_bin, tmp_path_factory):
    server = start_hub_server(kernelhub_bin, tmp_path_factory.mktemp("card-hub"), CONFIG)
    yield server
    stop_hub_server(server)


@pytest.fixture(scope="module")
def init_card(kernel_builder, tmp_path_factory) -> str:
    """The CARD.md `kernel-builder init` gives a new kernel (the template fill-card renders)."""
    folder = tmp_path_factory.mktemp("init-card")
    run([kernel_builder, "init", "--name", "me/any-kernel", "--backends", "cpu"], cwd=folder,
        check=True)
    return (folder / "any-kernel" / "CARD.md").read_text()


def _copy(built, tmp_path: Path, card: str) -> Path:
    kernel = tmp_path / built.kernel.name
    copy_built(built.kernel, kernel)
    (kernel / "CARD.md").write_text(card)
    return kernel


def _layers_kernel(kernel_builder, tmp_path: Path, card: str, cpu_only: bool) -> Path:
    """examples/silu-and-mul with a layers module exported (noarch: built without a compiler),
    for cpu and cuda or for cpu only."""
    kernel = tmp_path / "silu-and-mul"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "silu-and-mul", kernel,
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    if cpu_only:
        toml = kernel / "build.toml"
        toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    package = kernel / "torch-ext" / "silu_and_mul"
    (package / "layers.py").write_text(LAYERS_PY)
    init = package / "__init__.py"
    init.write_text(init.read_text().replace('__all__ = ["silu_and_mul"]',
                                             '__all__ = ["silu_and_mul", "layers"]')
                    + "\n\nfrom . import layers  # noqa: E402\n")
    (kernel / "CARD.md").write_text(card)
    run([kernel_builder, "build", kernel, "--python", VENV_BIN / "python"], check=True)
    return kernel


# (shape, org): each shape under an untrusted publisher; the noarch one under a trusted one too.
SHAPES = [("ops-cpu-only", UNTRUSTED_ORG), ("noarch", UNTRUSTED_ORG), ("noarch", TRUSTED_ORG),
          ("layers", UNTRUSTED_ORG), ("layers-cpu-only", UNTRUSTED_ORG)]


def _kernel_for(shape, kernel_builder, built_example, tmp_path, card) -> Path:
    if shape == "ops-cpu-only":
        return _copy(built_example("relu", ["cpu"]), tmp_path, card)
    if shape == "noarch":
        return _copy(built_example("silu-and-mul"), tmp_path, card)
    return _layers_kernel(kernel_builder, tmp_path, card, cpu_only=shape == "layers-cpu-only")


def _page(url: str):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=60) as response:
        return parse(response.read().decode())


def _snippets(doc) -> dict:
    """The page's Python snippets: the card's code blocks that use kernels (or kernelhub), and
    the page's own "How to load it"."""
    found = {}
    card = doc.by_id("card")
    assert card is not None, "the page shows no card"
    for number, block in enumerate(card.find_all("pre")):
        text = block.text()
        if "from kernels import" in text or "from kernelhub import" in text:
            found[f"card-{number}"] = text
    found["load-python"] = doc.by_id("load-python").text()
    return found


def _run_snippet(code: str, folder: Path) -> subprocess.CompletedProcess:
    folder.mkdir(parents=True)
    script = folder / "snippet.py"
    script.write_text(code)
    env = dict(os.environ)
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "LOCAL_KERNELS"):
        env.pop(name, None)
    # A closed port on loopback: a snippet that does not name its hub fails here, offline.
    env.update(hub_env("http://127.0.0.1:9", folder / "cache"))
    # kernels 0.17.2 with telemetry disabled sends a user agent httpx refuses (serve_helpers).
    del env["HF_HUB_DISABLE_TELEMETRY"]
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=600, cwd=folder)


@pytest.mark.parametrize(("shape", "org"), SHAPES, ids=[f"{s}-{o}" for s, o in SHAPES])
def test_every_snippet_of_the_kernel_page_loads_from_this_hub(
        shape, org, hub, kernel_builder, built_example, init_card, tmp_path):
    kernel = _kernel_for(shape, kernel_builder, built_example, tmp_path, init_card)
    repo = f"{org}/{shape}"
    env = hub_env(hub.url, tmp_path / "upload-cache", HF_TOKEN=hub.token)
    run([kernel_builder, "upload", kernel, "--repo-id", repo, "--no-check"], env=env, check=True)

    doc = _page(f"{hub.url}/kernels/{repo}")
    snippets = _snippets(doc)
    # The card's usage, the page's own, and for a kernel with layers the kernelize example.
    assert len(snippets) == (3 if shape.startswith("layers") else 2), list(snippets)
    # The card links to the repository on this hub, not on huggingface.co.
    links = [a.attrs.get("href") for a in doc.by_id("card").find_all("a")]
    assert f"{hub.url}/kernels/{repo}" in links
    assert not [link for link in links if "huggingface.co" in (link or "")], links

    for name, code in snippets.items():
        assert f'os.environ["HF_ENDPOINT"] = "{hub.url}"' in code, (name, code)
        assert ("trust_remote_code=True" in code) == (org == UNTRUSTED_ORG), (name, code)
        if "get_kernel(" in code:
            assert ('backend="cpu"' in code) == shape.endswith("cpu-only"), (name, code)
        result = _run_snippet(code, tmp_path / "runs" / name)
        assert result.returncode == 0, f"{name}:\n{code}\n---\n{result.stdout}{result.stderr}"
        cache = tmp_path / "runs" / name / "cache"
        downloaded = [p.name for p in cache.iterdir()] if cache.exists() else []
        assert f"kernels--{org}--{shape}" in downloaded, (name, downloaded)


def test_fill_card_names_the_hub_it_is_for(kernel_builder, built_example, init_card, tmp_path):
    # fill-card writes the card for --endpoint, else HF_ENDPOINT; huggingface.co needs no
    # HF_ENDPOINT line and --trusted-publisher drops trust_remote_code.
    kernel = _copy(built_example("relu", ["cpu"]), tmp_path, init_card)
    plain = run([kernel_builder, "fill-card", kernel, "--repo-id", "org/relu"],
                env={"HF_ENDPOINT": ""}, check=True).stdout
    assert "HF_ENDPOINT" not in plain
    assert "[`org/relu`](https://huggingface.co/kernels/org/relu)" in plain
    assert 'get_kernel("org/relu", version=1, backend="cpu", trust_remote_code=True)' in plain
    private = run([kernel_builder, "fill-card", kernel, "--repo-id", "org/relu",
                   "--endpoint", "http://127.0.0.1:8123/", "--trusted-publisher"],
                  check=True).stdout
    assert 'os.environ["HF_ENDPOINT"] = "http://127.0.0.1:8123"' in private
    assert "[`org/relu`](http://127.0.0.1:8123/kernels/org/relu)" in private
    assert 'get_kernel("org/relu", version=1, backend="cpu")\n' in private
    from_env = run([kernel_builder, "fill-card", kernel, "--repo-id", "org/relu"],
                   env={"HF_ENDPOINT": "http://127.0.0.1:8124"}, check=True).stdout
    assert 'os.environ["HF_ENDPOINT"] = "http://127.0.0.1:8124"' in from_env
