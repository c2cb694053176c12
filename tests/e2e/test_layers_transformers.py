# SPDX-License-Identifier: Apache-2.0
"""The layer API with a real consumer (issue 11): transformers 5.22.2's Llama, kernelized with
the kernel layers of examples/rmsnorm, built by our `kernel-builder`, uploaded with `kernel-builder
upload` and served by `kernelhub serve`.

A tiny LlamaForCausalLM (random weights from a fixed seed, nothing downloaded) maps its RMSNorm
and SiLU modules to the kernel's `layers.RMSNorm` / `layers.SiLU`; after `kernelize` every such
module's forward must be the kernel layer's, the kernel's ops must run (5 rms_norm and 2 silu
calls a forward) and the logits must equal the un-kernelized model's. The same through a
kernels.lock written by `kernelhub lock`, and under torch.compile(fullgraph=True) with
Mode.INFERENCE | Mode.TORCH_COMPILE. Each runs under kernelhub and under the reference `kernels`
0.17.2 (kernels built by us must load in the reference); also CUDA capability ranges chosen
for a simulated device (the real one is in test_layers_gpu.py). Finally `get_kernel_dep`:
examples/dep-user declares examples/dep-base in kernel-depends and takes it from
`get_kernel_dep` while it is imported (and a copy of it that uses only the reference's
`from kernels import get_kernel_dep` loads under kernelhub too).

On a CUDA build of torch the loader picks the cuda variant even without a GPU, so there the
build needs nvcc (the example's cuda variant also serves CPU tensors). One build of the three
examples per session (conftest's `built_example`, shared with test_kernel_test_command.py).
"""
import json
import shutil
import textwrap

import pytest

from conftest import run, venv_torch
from layers_support import (EXAMPLES, ORG, PYTHON, ServedHub, assert_kernel_forwards, build,
                            find_nvcc, shared_build, variants, venv_python)

TORCH_CUDA = venv_torch().get("cuda", "")
HAS_TRANSFORMERS = venv_python("import importlib.util as u; print(u.find_spec('transformers') "
                               "is not None)") == "True"
LAYERS = {"RMSNorm": "RMSNorm", "SiLU": "SiLU"}
EXPECTED_CALLS = {"rms_norm": 5, "silu": 2}
PACKAGES = ["kernelhub", "kernels"]

pytestmark = [
    pytest.mark.skipif(not PYTHON.exists() or shutil.which("cmake") is None
                       or shutil.which("ninja") is None,
                       reason="needs the .venv with torch, cmake and ninja"),
    pytest.mark.skipif(not HAS_TRANSFORMERS,
                       reason="transformers is not in .venv (requirements-dev.txt pins 5.22.2; "
                              "run scripts/setup.sh)"),
    pytest.mark.skipif(bool(TORCH_CUDA) and find_nvcc() is None,
                       reason="torch is a CUDA build, so the loader picks the kernel's cuda "
                              "variant, and building it needs nvcc"),
]


def use_the_kernels_idiom(kernel):
    """Rewrites dep-user to take its dependency only through the reference's import path."""
    package = kernel / "torch-ext" / "dep_user"
    (package / "_dependencies.py").unlink()
    (package / "__init__.py").write_text(textwrap.dedent(f"""\
        import torch
        from kernels import get_kernel_dep

        base = get_kernel_dep("{ORG}/dep-base")


        def affine_twice(x: torch.Tensor, scale: float, shift: float) -> torch.Tensor:
            return base.scale_and_shift(base.scale_and_shift(x, scale, shift), scale, shift)
    """))


@pytest.fixture(scope="module")
def hub(kernel_builder, kernelhub_bin, built_example, tmp_path_factory):
    """The three examples, built once, on one server."""
    base = tmp_path_factory.mktemp("layers")
    rmsnorm = shared_build(built_example, "rmsnorm")
    dep_base = shared_build(built_example, "dep-base")
    dep_user = shared_build(built_example, "dep-user")
    # dep-user as kernels written for the reference are: `from kernels import get_kernel_dep`.
    idiom = build(kernel_builder, EXAMPLES / "dep-user", base / "dep-user-kernels-idiom",
                  edit=use_the_kernels_idiom)
    served = ServedHub(kernelhub_bin, base)
    served.kernels = {"rmsnorm": rmsnorm, "dep-base": dep_base, "dep-user": dep_user,
                      "dep-user-kernels-idiom": idiom}
    try:
        for name, kernel in served.kernels.items():
            served.upload(kernel_builder, kernel, name)
        yield served
    finally:
        served.close()


def test_builds_have_the_variants_and_kernel_depends(hub):
    built = variants(hub.kernels["rmsnorm"])
    assert any("-cpu-" in v for v in built), built
    if TORCH_CUDA:
        assert any("-cu" in v for v in built), built
    # layers.md §9.1: the general kernel-depends go into every variant's metadata.json.
    for variant in variants(hub.kernels["dep-user"]):
        metadata = json.loads((hub.kernels["dep-user"] / "build" / variant / "metadata.json")
                              .read_text())
        assert metadata["kernel-depends"] == [{"repo-id": f"{ORG}/dep-base", "version": 1}]
    for variant in variants(hub.kernels["dep-base"]):
        metadata = json.loads((hub.kernels["dep-base"] / "build" / variant / "metadata.json")
                              .read_text())
        assert metadata.get("kernel-depends", []) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_kernelize_tiny_llama_from_the_hub(hub, package):
    report = hub.scenario(package, "hub", repo_id=f"{ORG}/rmsnorm", device="cpu")
    assert_kernel_forwards(report, LAYERS)
    assert report["calls"] == EXPECTED_CALLS


@pytest.fixture(scope="module")
def lockfile(hub, kernelhub_bin):
    """kernels.lock of a project depending on the served rmsnorm, written by `kernelhub lock`."""
    project = hub.base / "locked-project"
    project.mkdir()
    (project / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [project]
        name = "tiny-llama-app"
        version = "0.1.0"

        [tool.kernels.dependencies]
        "{ORG}/rmsnorm" = 1
    """))
    result = run([kernelhub_bin, "lock", project],
                 env=hub.client_env(hub.base / "lock-home"))
    assert result.returncode == 0, result.stderr
    lock = project / "kernels.lock"
    entries = json.loads(lock.read_text())
    assert [(e["dependency"], e["lock"]["commit"]) for e in entries] == [
        ({"repo-id": f"{ORG}/rmsnorm", "version": 1}, hub.commits["rmsnorm"])]
    return lock


@pytest.mark.parametrize("package", PACKAGES)
def test_kernelize_through_a_lock(hub, lockfile, package):
    report = hub.scenario(package, "lock", repo_id=f"{ORG}/rmsnorm", lockfile=str(lockfile),
                          device="cpu")
    assert_kernel_forwards(report, LAYERS)
    assert report["calls"] == EXPECTED_CALLS
    assert hub.commits["rmsnorm"] in report["repository"]


def test_torch_compile_fullgraph_of_the_kernelized_model(hub):
    report = hub.scenario("kernelhub", "compile", repo_id=f"{ORG}/rmsnorm", device="cpu")
    assert_kernel_forwards(report, LAYERS)
    # Dynamo captured the kernel's ops in the one graph (their fake implementations traced).
    assert report["graph_calls"] == EXPECTED_CALLS


@pytest.mark.parametrize("package", PACKAGES)
def test_capability_ranges_on_a_simulated_device(hub, package):
    # test_layers_gpu.py makes the same choice on a real GPU; here the capability probe says
    # 8.6 and the model runs on the CPU. Only the [86, 86] range names layers the kernel has.
    report = hub.scenario(package, "capability", repo_id=f"{ORG}/rmsnorm",
                          simulated_capability=86)
    assert report["capability"] == 86
    assert_kernel_forwards(report, LAYERS)
    assert report["calls"] == EXPECTED_CALLS


@pytest.mark.parametrize("package, user", [
    ("kernelhub", "dep-user"), ("kernels", "dep-user"),
    # layers.md §9.3: kernels call `from kernels import get_kernel_dep`; kernelhub's loader
    # must answer that too.
    ("kernelhub", "dep-user-kernels-idiom"),
])
def test_get_kernel_dep_hands_dep_base_to_dep_user(hub, package, user):
    report = hub.scenario(package, "deps", user_repo_id=f"{ORG}/{user}",
                          base_repo_id=f"{ORG}/dep-base")
    assert report["base_name"] == "dep-base"
    # The dependency was imported as a kernel of its own, under its unique module name.
    assert report["base_module"].startswith("_dep_base_") and report["base_in_sys_modules"]
    assert report["user_module"].startswith("_dep_user_")
    assert report["outside_loading"] == "`get_kernel_dep` only works during kernel loading."
