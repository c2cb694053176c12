# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build` of the relu example's cuda variant (issue 3).

nvcc compiles relu_cuda/relu.cu for the example's cuda-capabilities ["8.0", "9.0+PTX"]; the
variant is named after the CUDA of the active torch, its metadata.json lists the archs
compiled, and `cuobjdump` on the built module must list exactly those: SASS for every arch,
PTX for the +PTX ones. The variant only runs where torch sees a GPU; elsewhere that test is
skipped. One build of about two minutes on a small machine, shared by the tests: conftest's
`built_example("relu")`, which test_kernel_test_command.py and test_clean.py use too.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, VENV_BIN, example_unique_id, run, venv_torch
from layers_support import venv_python

PYTHON = VENV_BIN / "python"
UNIQUE_ID = example_unique_id("relu")


def find_nvcc():
    """Where kernel-builder looks: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin."""
    candidates = [shutil.which("nvcc")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(str(Path(os.environ["CUDA_HOME"]) / "bin" / "nvcc"))
    candidates.append("/usr/local/cuda/bin/nvcc")
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def find_cuobjdump(nvcc):
    """cuobjdump from PATH or the toolkit, else the `nvidia-cuda-cuobjdump` package's."""
    candidates = [shutil.which("cuobjdump")]
    if nvcc:
        candidates.append(str(Path(nvcc).parent / "cuobjdump"))
    site = venv_python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
    if site:
        candidates += sorted(str(p) for p in Path(site).glob("nvidia/*/bin/cuobjdump"))
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


NVCC = find_nvcc()
TORCH_CUDA = venv_torch().get("cuda", "")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not PYTHON.exists() or shutil.which("cmake") is None
                       or shutil.which("ninja") is None,
                       reason="needs the .venv with torch, cmake and ninja"),
    pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, $CUDA_HOME/bin, "
                                            "/usr/local/cuda/bin): install the CUDA toolkit"),
    pytest.mark.skipif(not TORCH_CUDA, reason="the .venv's torch is not a CUDA build"),
]


def flat(version):
    major, minor = version.split(".")[:2]
    return major + minor


def sm_code(arch):
    """"9.0+PTX" -> "90", "9.0a" -> "90a": how nvcc and cuobjdump name an arch."""
    return arch.removesuffix("+PTX").replace(".", "")


@pytest.fixture(scope="module")
def built(built_example):
    relu = built_example("relu")
    summary = relu.summary
    torch_flat = flat(venv_torch()["version"].split("+")[0])
    name = f"torch{torch_flat}-cxx11-cu{flat(TORCH_CUDA)}-x86_64-linux"
    return relu.kernel, summary, relu.kernel / "build" / name, relu.result.stderr


def test_cuda_variant_is_named_after_torchs_cuda(built):
    kernel_dir, summary, variant, _ = built
    cuda = [v for v in summary["variants"] if v["backend"] == "cuda"]
    assert [v["name"] for v in cuda] == [variant.name]
    assert cuda[0]["id"] == f"_relu_cuda_{UNIQUE_ID}"
    assert (variant / f"_relu_cuda_{UNIQUE_ID}.abi3.so").is_file()
    assert "cuda" not in [s["backend"] for s in summary["skipped"]]


def test_list_variants_names_what_build_builds(built, kernel_builder):
    """issue 13 item 8: one rule for the CUDA part (torch's CUDA), in list-variants and build."""
    kernel_dir, summary, _, _ = built
    env = {"KERNELHUB_PYTHON": str(PYTHON)}
    listed = run([kernel_builder, "list-variants", kernel_dir], env=env, check=True).stdout.split()
    assert listed == sorted(v["name"] for v in summary["variants"])


def test_metadata_lists_the_compiled_archs_and_the_reference_reads_it(built):
    import kernels_data as kd

    _, _, variant, _ = built
    ours = json.loads((variant / "metadata.json").read_text())
    assert ours["backend"] == {"type": "cuda", "archs": ["8.0", "9.0+PTX"]}
    metadata = kd.Metadata.from_bytes((variant / "metadata.json").read_bytes())
    assert str(metadata.backend.backend_type) == "cuda"
    metadata.digest.validate(kd.Digest.hash_variant(kd.DigestAlgorithm.SHA256, variant))


def test_cuobjdump_lists_exactly_the_metadata_archs(built):
    cuobjdump = find_cuobjdump(NVCC)
    if cuobjdump is None:
        pytest.skip("cuobjdump not found: pip install nvidia-cuda-cuobjdump")
    _, _, variant, _ = built
    archs = json.loads((variant / "metadata.json").read_text())["backend"]["archs"]
    module = next(variant.glob("*.abi3.so"))

    def listed(kind):
        out = subprocess.run([cuobjdump, f"--list-{kind}", str(module)], capture_output=True,
                             text=True, check=True).stdout
        # "ELF file    1: _relu_cuda_<id>.1.sm_80.cubin", "PTX file    1: ....sm_90.ptx"
        return sorted(set(re.findall(r"\.sm_(\d+[af]?)\.(?:cubin|ptx)", out)))

    assert listed("elf") == sorted({sm_code(a) for a in archs})
    assert listed("ptx") == sorted({sm_code(a) for a in archs if a.endswith("+PTX")})


def test_variant_runs_where_torch_sees_a_gpu(built):
    if not venv_torch().get("cuda_available"):
        pytest.skip("torch sees no CUDA GPU on this machine; the variant is built but not run")
    kernel_dir, _, _, _ = built
    result = subprocess.run([str(PYTHON), "-c", f"""
import json, pathlib, torch, kernels
k = kernels.get_local_kernel(pathlib.Path({str(kernel_dir)!r}), backend="cuda")
x = torch.randn(1 << 20, device="cuda")
print(json.dumps({{"equal": torch.equal(k.relu(x), torch.relu(x))}}))
"""], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"equal": True}


def test_capabilities_that_leave_nothing_to_compile_fail_the_build(kernel_builder, tmp_path):
    kernel_dir = tmp_path / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel_dir,
                    ignore=shutil.ignore_patterns("build"))
    toml = kernel_dir / "build.toml"
    toml.write_text(toml.read_text().replace('cuda-capabilities = ["8.0", "9.0+PTX"]',
                                             'cuda-capabilities = ["99999.0"]'))
    result = run([kernel_builder, "build", kernel_dir, "--python", PYTHON])
    assert result.returncode != 0
    assert ('cannot build cuda: cuda kernel "relu_cuda": empty set of capabilities after '
            "intersection (kernel: 99999.0, supported: ") in result.stderr
    assert not (kernel_dir / "build").exists() or not any((kernel_dir / "build").glob("torch*"))


def test_a_terminal_shows_the_cuda_steps_as_cuda_progress(kernel_builder, tmp_path):
    """issue 13 item 11: on a terminal each variant's ninja steps show as one progress line
    naming its backend and the source, relative to the kernel: `[cuda 1/4] relu_cuda/relu.cu`."""
    from test_build_output import on_terminal

    kernel_dir = tmp_path / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel_dir,
                    ignore=shutil.ignore_patterns("build"))
    # The shared build's id and ccache paths relative to the copy: its compiles are ccache
    # hits of built_example("relu")'s, and ninja still runs (and shows) every step.
    status, text = on_terminal([kernel_builder, "build", kernel_dir, "--python", PYTHON,
                                "--unique-id", UNIQUE_ID], {"CCACHE_BASEDIR": str(kernel_dir)})
    assert status == 0, text
    assert re.search(r"\r\x1b\[K\[cuda \d+/\d+\] relu_cuda/relu\.cu(\r|\x1b)", text), text
    assert re.search(r"\r\x1b\[K\[cpu \d+/\d+\] relu_cpu/relu_cpu\.cpp(\r|\x1b)", text), text
    assert "Building CUDA object" not in text  # ninja's own lines stay hidden
