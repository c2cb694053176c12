# SPDX-License-Identifier: Apache-2.0
"""Shared by test_layers_transformers.py and test_layers_gpu.py: build the example kernels with
our `kernel-builder` in a temporary copy, serve them with `kernelhub serve` (`kernel-builder
upload` as version 1) and run tiny_llama_client.py scenarios against that server."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, HubServer, example_unique_id, run

PYTHON = VENV_BIN / "python"
CLIENT = Path(__file__).resolve().parent / "tiny_llama_client.py"
# dep-user's build.toml names its dependency under this organization, so every example is
# published there. The reference loader checks publisher trust: the server's config trusts it.
ORG = "kernelhub-examples"
EXAMPLES = REPO_ROOT / "examples"


# Memoised: several test modules ask the same at collection, each answer a torch import (~2 s).
@functools.lru_cache(maxsize=None)
def venv_python(code: str) -> str:
    if not PYTHON.exists():
        return ""
    result = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True,
                            timeout=120)
    return result.stdout.strip() if result.returncode == 0 else ""


def venv_has_tvm_ffi() -> bool:
    return venv_python("import tvm_ffi; print('found')") == "found"


def find_nvcc():
    """Where kernel-builder looks: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin."""
    candidates = [shutil.which("nvcc")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(str(Path(os.environ["CUDA_HOME"]) / "bin" / "nvcc"))
    candidates.append("/usr/local/cuda/bin/nvcc")
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def build(kernel_builder, source: Path, destination: Path, *options, edit=None) -> Path:
    """Copies an example (without its build/), lets `edit` change the copy, and builds every
    variant this machine can."""
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("build", "__pycache__"))
    if edit is not None:
        edit(destination)
    # A fixed unique id and ccache paths relative to the copy make a rebuild in another
    # temporary folder a cache hit (about 60 s down to under 20 s for rmsnorm's two variants).
    result = run([kernel_builder, "build", destination, "--python", PYTHON, "--unique-id",
                  example_unique_id(destination.name), *options],
                 env={"CCACHE_BASEDIR": str(destination)})
    if result.returncode != 0:
        raise AssertionError(f"kernel-builder build {source.name} failed:\n{result.stderr}")
    return destination


def shared_build(built_example, name: str) -> Path:
    """examples/<name> unchanged, as conftest's `built_example` built it once per session (every
    variant, the same unique id as `build` gives it): read it, never change it."""
    example = built_example(name)
    if example.result.returncode != 0:
        raise AssertionError(f"kernel-builder build {name} failed:\n{example.result.stderr}")
    return example.kernel


def variants(kernel: Path) -> list:
    return sorted(p.name for p in (kernel / "build").iterdir() if (p / "metadata.json").exists())


class ServedHub:
    """`kernelhub serve` on a fresh root whose config trusts ORG; stopped by close()."""

    def __init__(self, kernelhub_bin: Path, base: Path):
        self.base = base
        root = base / "hub-root"
        root.mkdir(parents=True)
        (root / "config.toml").write_text(f"[organizations.{ORG}]\ntrustedKernelPublisher = true\n")
        self.token = "kh-layers-token"
        (base / "hub-tokens").write_text(self.token + "\n")
        self.process = subprocess.Popen(
            [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
             str(base / "hub-tokens")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.process.kill()
            pytest.fail(f"kernelhub serve did not start: {self.process.stderr.read()}")
        self.server = HubServer(self.url, self.token, root, self.process)
        self.commits: dict = {}
        self.runs = 0

    def upload(self, kernel_builder, kernel: Path, name: str) -> str:
        """`kernel-builder upload` of a built kernel to ORG/name (branch v1); returns the commit."""
        report = self.base / f"upload-{name}.json"
        env = {"HF_ENDPOINT": self.url, "HF_TOKEN": self.token,
               "HF_HOME": str(self.base / "upload-home"), "NO_PROXY": "127.0.0.1,localhost",
               "no_proxy": "127.0.0.1,localhost"}
        result = run([kernel_builder, "upload", kernel, "--repo-id", f"{ORG}/{name}",
                      "--output-json", report, "--quiet"], env=env)
        if result.returncode != 0:
            raise AssertionError(f"kernel-builder upload {name} failed:\n{result.stderr}")
        data = json.loads(report.read_text())
        assert data["branch"] == "v1", data
        commit = self.branch_commit(f"{ORG}/{name}", "v1")
        self.commits[name] = commit
        return commit

    def branch_commit(self, repo_id: str, branch: str) -> str:
        code = ("import json; from huggingface_hub import HfApi; "
                f"refs = HfApi(endpoint={self.url!r}).list_repo_refs({repo_id!r}, "
                "repo_type='kernel'); "
                f"print(json.dumps([b.target_commit for b in refs.branches if b.name == {branch!r}]))")
        result = subprocess.run([str(PYTHON), "-c", code], env=self.client_env(), text=True,
                                capture_output=True, timeout=120)
        assert result.returncode == 0, result.stderr
        commits = json.loads(result.stdout.strip().splitlines()[-1])
        assert len(commits) == 1, commits
        return commits[0]

    def client_env(self, home: Path | None = None) -> dict:
        """A client of this server with its own Hub cache. HF_HUB_DISABLE_TELEMETRY stays unset:
        with it the reference kernels builds a user agent ending in "; ", which httpx refuses."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("HF_HUB_DISABLE_TELEMETRY", "HF_HUB_OFFLINE", "HF_TOKEN",
                            "HF_HUB_CACHE", "KERNELS_CACHE", "LOCAL_KERNELS")}
        env.update({"HF_ENDPOINT": self.url, "HF_HOME": str(home or self.base / "client-home"),
                    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                    "TOKENIZERS_PARALLELISM": "false"})
        return env

    def scenario(self, package: str, name: str, **arguments):
        """Runs a tiny_llama_client scenario in a fresh interpreter with a fresh cache."""
        self.runs += 1
        home = self.base / f"client-{self.runs}-{package}-{name}"
        result = subprocess.run(
            [str(PYTHON), str(CLIENT), package, name, json.dumps(arguments)],
            env=self.client_env(home), capture_output=True, text=True, timeout=600,
            stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise AssertionError(f"{package} scenario {name} failed ({result.returncode}):\n"
                                 f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}")
        return json.loads(result.stdout.strip().splitlines()[-1])

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def assert_kernel_forwards(report: dict, layers: dict):
    """Every module decorated with a mapped layer name got the kernel layer's forward, from the
    kernel's `layers` module (named after the kernel's unique module, never transformers')."""
    assert set(report["forwards"]) == set(layers), report
    for layer, kernel_layer in layers.items():
        (forward,) = report["forwards"][layer]  # one forward for all modules of the kind
        module, qualname = forward.split(":")
        assert qualname == f"{kernel_layer}.forward", report
        assert module.startswith("_rmsnorm_") and module.endswith(".layers"), report

