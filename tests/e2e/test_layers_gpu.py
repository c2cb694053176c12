# SPDX-License-Identifier: Apache-2.0
"""The layer API on a real GPU (issue 11): examples/rmsnorm's cuda variant, built by our
`kernel-builder` and served by `kernelhub serve`, runs its kernels_ci tests on the device, and a
tiny transformers Llama on the GPU is kernelized with CUDA capability ranges: the range that
holds exactly the device's capability maps to the real layers, a wider range and a range above
it map to a layer the kernel does not have (loading it would fail), so the logits only match if
the most specific matching range was chosen on the device's real capability.

Every test here needs torch to see a CUDA device; elsewhere the module is skipped.
"""
import re
import shutil

import pytest

from conftest import run, venv_torch
from layers_support import (ORG, PYTHON, ServedHub, assert_kernel_forwards, find_nvcc,
                            shared_build, variants, venv_python)

CUDA_AVAILABLE = bool(venv_torch().get("cuda_available"))
HAS_TRANSFORMERS = venv_python("import importlib.util as u; print(u.find_spec('transformers') "
                               "is not None)") == "True"
LAYERS = {"RMSNorm": "RMSNorm", "SiLU": "SiLU"}
EXPECTED_CALLS = {"rms_norm": 5, "silu": 2}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CUDA_AVAILABLE,
                       reason="needs a CUDA device visible to torch (torch.cuda.is_available() "
                              "is False in .venv): the cuda variant and capability ranges are "
                              "checked on a real GPU"),
    pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found: the cuda variant cannot be "
                                                   "built"),
    pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                       reason="needs cmake and ninja"),
]


@pytest.fixture(scope="module")
def hub(kernel_builder, kernelhub_bin, built_example, tmp_path_factory):
    base = tmp_path_factory.mktemp("layers-gpu")
    rmsnorm = shared_build(built_example, "rmsnorm")
    served = ServedHub(kernelhub_bin, base)
    served.kernel = rmsnorm
    try:
        served.upload(kernel_builder, rmsnorm, "rmsnorm")
        yield served
    finally:
        served.close()


def test_cuda_variant_passes_its_tests_on_the_device(hub, kernel_builder):
    cuda_variants = [v for v in variants(hub.kernel) if "-cu" in v]
    assert cuda_variants, variants(hub.kernel)
    result = run([kernel_builder, "test", hub.kernel, "--variant", cuda_variants[0],
                  "--python", PYTHON, "--", "-v"])
    assert result.returncode == 0, result.stdout + result.stderr
    # The tests ran on cuda too, not only on the CPU that this variant also serves.
    assert re.search(r"\[[^\]]*cuda[^\]]*\] PASSED", result.stdout), result.stdout


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="transformers is not in .venv "
                                                 "(requirements-dev.txt pins 5.22.2)")
@pytest.mark.parametrize("package", ["kernelhub", "kernels"])
def test_capability_range_is_chosen_on_the_device(hub, package):
    report = hub.scenario(package, "capability", repo_id=f"{ORG}/rmsnorm")
    assert report["capability"] > 0
    assert_kernel_forwards(report, LAYERS)
    assert report["calls"] == EXPECTED_CALLS
