# SPDX-License-Identifier: Apache-2.0
"""A cpu-only kernel on a CUDA build of torch without a GPU (issue 22 §4), a deliberate
difference from the reference (docs/moving-from-kernels.md).

The default Linux torch is a CUDA build, so torch selects the cuda backend on a laptop or CI
machine without a GPU, and the reference loader refuses a cpu-only kernel there ("backend
(cpu) does not match selected backend (cu132)"), by get_kernel and by kernelize(device="cpu")
with a "cpu" mapping alike. kernelhub prefers a cpu variant when the selected backend has no
device in the process, and loads the cpu variant for a "cpu" mapping.

The machine is the real case when the .venv's torch is a CUDA build: the client runs with
CUDA_VISIBLE_DEVICES="" so that a GPU, if this machine has one, is hidden from torch, which
then has its CUDA version and no device (torch.cuda.is_available() is False), as on a machine
without a GPU. A CPU build of torch cannot show the case (it selects cpu anyway): skipped.
"""
import json
import subprocess
import textwrap

import pytest

from conftest import run, venv_torch
from layers_support import EXAMPLES, ORG, PYTHON, ServedHub, build

NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}
pytestmark = pytest.mark.skipif(
    not venv_torch().get("cuda"), reason="needs the .venv with a CUDA build of torch")


def cpu_only(kernel):
    """examples/rmsnorm without its cuda kernel: a cpu-only kernel with a layers module."""
    toml = kernel / "build.toml"
    text = toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]')
    toml.write_text(text[:text.index("# The cuda variant")])


@pytest.fixture(scope="module")
def served(kernel_builder, kernelhub_bin, tmp_path_factory):
    base = tmp_path_factory.mktemp("no-gpu")
    kernel = build(kernel_builder, EXAMPLES / "rmsnorm", base / "rmsnorm-cpu-only",
                   edit=cpu_only)
    [variant] = [p.name for p in (kernel / "build").iterdir() if p.name.startswith("torch")]
    assert "-cpu-" in variant
    hub = ServedHub(kernelhub_bin, base)
    try:
        hub.upload(kernel_builder, kernel, "rmsnorm-cpu-only")
        hub.kernel = kernel
        yield hub
    finally:
        hub.close()


CLIENT = textwrap.dedent("""\
    import json, sys
    import torch
    from torch import nn
    import kernelhub
    from kernelhub import (LayerRepository, LocalLayerRepository, kernelize,
                           use_kernel_forward_from_hub, use_kernel_mapping, Mode)

    repo, local = sys.argv[1], __import__("pathlib").Path(sys.argv[2])
    out = {"cuda": torch.version.cuda, "device": torch.cuda.is_available()}
    x = torch.randn(4, 16)
    weight = torch.rand(16) + 0.5
    expected = weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def attempt(name, call):
        try:
            out[name] = call()
        except Exception as error:
            out[name] = f"{type(error).__name__}: {error}"

    def rms_norm(kernel):
        got = kernel.rms_norm(x, weight, 1e-6)
        return {"close": bool(torch.allclose(got, expected, atol=1e-5)),
                "module": kernel.__name__}

    attempt("get_kernel", lambda: rms_norm(kernelhub.get_kernel(repo, version=1)))
    attempt("get_kernel_cpu",
            lambda: rms_norm(kernelhub.get_kernel(repo, version=1, backend="cpu")))
    attempt("get_local_kernel", lambda: rms_norm(kernelhub.get_local_kernel(local)))

    @use_kernel_forward_from_hub("RMSNorm")
    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(weight.clone())
            self.variance_epsilon = 1e-6

        def forward(self, hidden_states):
            return hidden_states * 0  # replaced by the kernel's layer

    def kernelized(repository):
        with use_kernel_mapping({"RMSNorm": {"cpu": repository}}, inherit_mapping=False):
            model = kernelize(Norm(), mode=Mode.INFERENCE, device="cpu")
        with torch.no_grad():
            return bool(torch.allclose(model(x), expected, atol=1e-5))

    attempt("kernelize_hub", lambda: kernelized(
        LayerRepository(repo, layer_name="RMSNorm", version=1)))
    attempt("kernelize_local", lambda: kernelized(
        LocalLayerRepository(local, layer_name="RMSNorm")))
    print(json.dumps(out))
""")


def client(served, tmp_path, executable=PYTHON):
    env = served.client_env(tmp_path / "home")
    env.update(NO_GPU)
    result = subprocess.run(
        [str(executable), "-c", CLIENT, f"{ORG}/rmsnorm-cpu-only", str(served.kernel)],
        env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_cpu_only_kernel_loads_on_cuda_torch_without_a_gpu(served, tmp_path):
    out = client(served, tmp_path)
    assert out["cuda"] is not None and out["device"] is False  # the case: CUDA torch, no GPU
    for call in ("get_kernel", "get_kernel_cpu", "get_local_kernel"):
        assert isinstance(out[call], dict), f"{call}: {out[call]}"
        assert out[call]["close"] is True, call
    assert out["kernelize_hub"] is True, out["kernelize_hub"]
    assert out["kernelize_local"] is True, out["kernelize_local"]


def test_a_cuda_request_is_still_refused_for_a_cpu_only_kernel(served, tmp_path):
    """Asked for cuda, the loader does not substitute the cpu variant."""
    env = served.client_env(tmp_path / "home")
    env.update(NO_GPU)
    result = run([PYTHON, "-c", "import sys, kernelhub\n"
                  "kernelhub.get_local_kernel(__import__('pathlib').Path(sys.argv[1]), "
                  "backend='cuda')", served.kernel], env=env)
    assert result.returncode == 1
    assert "backend (cpu) does not match selected backend (cu" in result.stderr


def test_a_cpu_mapping_of_a_kernel_without_a_cpu_variant_loads_what_the_loader_picks(
        kernel_builder, tmp_path):
    """A noarch kernel built for cuda only, mapped for "cpu": no cpu variant to prefer, so the
    loader's own choice (torch-cuda, whose Python layer runs on CPU tensors) is loaded, as
    kernels loads it."""
    kernel = tmp_path / "doubler"
    package = kernel / "torch-ext" / "doubler"
    package.mkdir(parents=True)
    (kernel / "build.toml").write_text(textwrap.dedent("""\
        [general]
        name = "doubler"
        version = 1
        edition = 5
        license = "Apache-2.0"
        backends = ["cuda"]

        [torch-noarch]
    """))
    (package / "__init__.py").write_text("from . import layers\n")
    (package / "layers.py").write_text(textwrap.dedent("""\
        from torch import nn


        class Double(nn.Module):
            def forward(self, x):
                return 2 * x
    """))
    run([kernel_builder, "build", kernel, "--python", PYTHON, "--skip-checks"], check=True)
    code = textwrap.dedent("""\
        import pathlib, sys
        import torch
        from torch import nn
        from kernelhub import (LocalLayerRepository, Mode, kernelize,
                               use_kernel_forward_from_hub, use_kernel_mapping)

        @use_kernel_forward_from_hub("Double")
        class Same(nn.Module):
            def forward(self, x):
                return x

        repo = LocalLayerRepository(pathlib.Path(sys.argv[1]), layer_name="Double")
        with use_kernel_mapping({"Double": {"cpu": repo}}, inherit_mapping=False):
            model = kernelize(Same(), mode=Mode.INFERENCE, device="cpu")
        print(model(torch.ones(2)).tolist())
    """)
    result = run([PYTHON, "-c", code, kernel], env=NO_GPU)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[2.0, 2.0]"
