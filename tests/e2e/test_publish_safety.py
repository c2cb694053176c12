# SPDX-License-Identifier: Apache-2.0
"""Nothing broken gets published (issue 13 items 1 and 2).

- A variant whose load check fails is moved out of build/ (never announced as built), and
  `upload` refuses while it is set aside; `--no-check` publishes the rest, saying so.
- `upload` load-checks a variant it has no record for (a hand-assembled build) before sending
  anything.
- The load error is the exception's message (a C++ `what():` line), not the last frame of the
  trace; the trace comes with -v, in check-load's text and JSON alike.

One C++ build (cpu, cached by ccache across runs) and noarch builds.
"""
import json
import shutil
import textwrap

import pytest

from conftest import REPO_ROOT, VENV_BIN, run

PYTHON = VENV_BIN / "python"
EXAMPLES = REPO_ROOT / "examples"
REPO = "safety/kernel"
WHAT = "Explicitly provided namespace (mykernel) in schema string does not match namespace"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="needs the .venv with torch")


def upload_env(hub_server, tmp_path):
    return {"HF_ENDPOINT": hub_server.url, "HF_TOKEN": hub_server.token,
            "HF_HOME": str(tmp_path / "home"), "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost"}


def noarch_kernel(root, init):
    """A noarch kernel for cpu and cuda whose package runs `init` when imported."""
    kernel = root / "probe"
    (kernel / "torch-ext" / "probe").mkdir(parents=True)
    (kernel / "build.toml").write_text(textwrap.dedent(f"""\
        [general]
        name = "probe"
        version = 1
        edition = 5
        license = "Apache-2.0"
        backends = ["cpu", "cuda"]

        [general.hub]
        repo-id = "{REPO}"

        [torch-noarch]
    """))
    (kernel / "torch-ext" / "probe" / "__init__.py").write_text(init)
    return kernel


# Only the cuda variant's copy fails: a noarch package is the same file in every variant.
FAILS_IN_CUDA = 'if "torch-cuda" in __file__:\n    raise RuntimeError("boom in cuda variant")\n'


def build(kernel_builder, kernel, *args):
    return run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id", "fixed",
                *args])


def test_a_failed_variant_is_set_aside_and_not_uploaded(kernel_builder, hub_server, tmp_path):
    kernel = noarch_kernel(tmp_path, FAILS_IN_CUDA)
    result = build(kernel_builder, kernel)
    assert result.returncode == 1
    assert "Built torch-cpu at" in result.stdout
    assert "torch-cuda" not in result.stdout  # never announced as built
    assert "kernels.get_local_kernel cannot load it: RuntimeError: boom in cuda variant" \
        in result.stderr
    assert not (kernel / "build" / "torch-cuda").exists()
    aside = kernel / "build" / ".kernelhub" / "torch-cuda" / "failed"
    assert (aside / "metadata.json").exists()
    assert f"torch-cuda was moved to {aside}" in result.stderr

    env = upload_env(hub_server, tmp_path)
    refused = run([kernel_builder, "upload", kernel, "--python", PYTHON], env=env)
    assert refused.returncode == 1
    assert "not uploading: 1 variant would not load for users" in refused.stderr
    assert "torch-cuda: its last load check failed (RuntimeError: boom in cuda variant" \
        in refused.stderr
    assert "Kernel uploaded" not in refused.stdout

    forced = run([kernel_builder, "upload", kernel, "--python", PYTHON, "--no-check"], env=env)
    assert forced.returncode == 0, forced.stderr
    assert "warning: --no-check: publishing 1 variant(s) without making sure" in forced.stderr
    assert "warning: torch-cuda is not published: its last load check failed" in forced.stderr

    # Fixed and built again: the variant is back in build/, nothing is left aside.
    (kernel / "torch-ext" / "probe" / "__init__.py").write_text("VALUE = 1\n")
    fixed = build(kernel_builder, kernel, "--json")
    assert fixed.returncode == 0, fixed.stderr
    report = json.loads(fixed.stdout)
    assert sorted(v["name"] for v in report["variants"]) == ["torch-cpu", "torch-cuda"]
    assert report["failed"] == []
    assert not aside.exists()


def test_build_json_lists_the_failed_variant(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path, FAILS_IN_CUDA)
    result = build(kernel_builder, kernel, "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert [v["name"] for v in report["variants"]] == ["torch-cpu"]
    [failed] = report["failed"]
    assert failed["name"] == "torch-cuda"
    assert failed["error"].startswith("RuntimeError: boom in cuda variant")


@pytest.fixture(scope="module")
def hard_coded_namespace(kernel_builder, tmp_path_factory):
    """examples/relu for cpu with `ops.def("mykernel::relu(...)")`: it builds, and aborts the
    process that loads it (c10::Error from the TORCH_LIBRARY block). Built without the checks,
    as a hand-assembled or foreign build would be."""
    kernel = tmp_path_factory.mktemp("namespace") / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel,
                    ignore=shutil.ignore_patterns("build", "relu_cuda", "__pycache__"))
    toml = (kernel / "build.toml").read_text()
    toml = toml[:toml.index("# Two archs")].replace('backends = ["cpu", "cuda"]',
                                                     'backends = ["cpu"]')
    (kernel / "build.toml").write_text(toml)
    binding = kernel / "torch-ext" / "torch_binding.cpp"
    binding.write_text(binding.read_text().replace('ops.def("relu(', 'ops.def("mykernel::relu('))
    result = run([kernel_builder, "build", kernel, "--python", PYTHON, "--unique-id", "fixed",
                  "--skip-checks"], env={"CCACHE_BASEDIR": str(kernel)})
    assert result.returncode == 0, result.stderr
    [variant] = [p for p in (kernel / "build").iterdir() if p.name.startswith("torch")]
    return kernel, variant


def test_check_load_shows_the_exception_not_the_last_frame(kernel_builder, hard_coded_namespace):
    kernel, variant = hard_coded_namespace
    result = run([kernel_builder, "check-load", kernel, "--python", PYTHON])
    assert result.returncode == 1
    assert f"kernels.get_local_kernel fails (backend cpu): c10::Error: {WHAT}" in result.stderr
    assert "torch_binding.cpp:9" in result.stderr  # where the block is, from the message
    assert "frame #" not in result.stderr

    as_json = run([kernel_builder, "check-load", kernel, "--python", PYTHON, "--json"])
    [entry] = json.loads(as_json.stdout)["variants"]
    assert entry["error"].startswith(f"c10::Error: {WHAT}")
    assert "output" not in entry

    verbose = run([kernel_builder, "check-load", kernel, "--python", PYTHON, "--json", "-v"])
    [entry] = json.loads(verbose.stdout)["variants"]
    assert "frame #" in entry["output"]
    text = run([kernel_builder, "check-load", kernel, "--python", PYTHON, "-v"])
    assert "frame #" in text.stderr


def test_upload_load_checks_a_variant_it_has_no_record_for(kernel_builder, hub_server,
                                                          hard_coded_namespace, tmp_path):
    kernel, variant = hard_coded_namespace
    env = upload_env(hub_server, tmp_path)
    refused = run([kernel_builder, "upload", kernel, "--repo-id", REPO, "--python", PYTHON],
                  env=env)
    assert refused.returncode == 1
    assert f"{variant.name}: no load check on record for these files; checking it now" \
        in refused.stderr
    assert f"{variant.name}: kernels.get_local_kernel cannot load it: c10::Error: {WHAT}" \
        in refused.stderr
    assert "Kernel uploaded" not in refused.stdout
