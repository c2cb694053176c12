# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder build --variant NAME` (issue 13 item 13): only the named variants of the
machine's buildable set are built; a name it cannot build is refused before anything is built,
with the closest name and the buildable ones. build-and-copy and build-and-upload take it too."""
import os

import pytest

from conftest import VENV_BIN, run
from test_build_and_upload import files_on, upload_env

PYTHON = VENV_BIN / "python"


def noarch_kernel(root):
    """A [torch-noarch] kernel for cpu and cuda: two variants any machine builds, fast."""
    kernel = root / "pick"
    (kernel / "torch-ext" / "pick").mkdir(parents=True)
    (kernel / "build.toml").write_text(
        '[general]\nname = "pick"\nversion = 1\nedition = 5\nlicense = "Apache-2.0"\n'
        'backends = ["cpu", "cuda"]\n\n[torch-noarch]\n')
    (kernel / "torch-ext" / "pick" / "__init__.py").write_text("import torch\n")
    return kernel


def built(kernel):
    return sorted(p.name for p in (kernel / "build").iterdir() if not p.name.startswith("."))


@pytest.mark.parametrize("command", ["build", "build-and-copy"])
def test_only_the_named_variant_is_built(kernel_builder, tmp_path, command):
    kernel = noarch_kernel(tmp_path)
    result = run([kernel_builder, command, "--variant", "torch-cuda", kernel, "--skip-checks",
                  "--python", PYTHON])
    assert result.returncode == 0, result.stderr
    assert built(kernel) == ["torch-cuda"]
    assert "Built torch-cuda at" in result.stdout
    assert "torch-cpu" not in result.stdout


def test_variant_is_repeatable(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    result = run([kernel_builder, "build", kernel, "--variant", "torch-cpu", "--variant",
                  "torch-cuda", "--skip-checks", "--python", PYTHON, "--json"])
    assert result.returncode == 0, result.stderr
    assert built(kernel) == ["torch-cpu", "torch-cuda"]


def test_an_unknown_variant_is_refused_with_did_you_mean(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    result = run([kernel_builder, "build", kernel, "--variant", "torch-cpo", "--skip-checks",
                  "--python", PYTHON])
    assert result.returncode == 1
    assert ('kernel-builder: error: variant "torch-cpo" is not one this machine builds; did '
            'you mean "torch-cpu"? (buildable here: torch-cpu, torch-cuda)') in result.stderr
    assert not (kernel / "build").exists() or built(kernel) == []


def test_a_short_form_builds_the_variants_it_matches(kernel_builder, tmp_path):
    """Issue 22 §9: `--variant cpu` was refused; it names the cpu variants."""
    kernel = noarch_kernel(tmp_path)
    result = run([kernel_builder, "build", kernel, "--variant", "cpu", "--skip-checks",
                  "--python", PYTHON])
    assert result.returncode == 0, result.stderr
    assert built(kernel) == ["torch-cpu"]


def test_a_far_name_is_refused_with_the_closest_one(kernel_builder, tmp_path):
    """Issue 22 §9: a name far from every buildable one got no suggestion."""
    kernel = noarch_kernel(tmp_path)
    result = run([kernel_builder, "build", kernel, "--variant", "torch-cpu-x86_64-linux",
                  "--skip-checks", "--python", PYTHON])
    assert result.returncode == 1
    assert ('variant "torch-cpu-x86_64-linux" is not one this machine builds; did you mean '
            '"torch-cpu"? (buildable here: torch-cpu, torch-cuda)') in result.stderr


def test_sign_takes_short_forms_and_names_the_closest_variant(kernel_builder, tmp_path):
    """Issue 22 §9, for `sign --variant`: a short form names the variants it matches; a name
    that matches none is refused with the closest built one."""
    kernel = noarch_kernel(tmp_path)
    run([kernel_builder, "build", kernel, "--skip-checks", "--python", PYTHON], check=True)
    key = tmp_path / "team.pem"
    run([kernel_builder, "keygen", "--output", key], check=True)
    signed = run([kernel_builder, "sign", kernel, "--key", key, "--variant", "cuda"])
    assert signed.returncode == 0, signed.stderr
    assert (kernel / "build" / "torch-cuda" / "metadata.json.sigstore").exists()
    assert not (kernel / "build" / "torch-cpu" / "metadata.json.sigstore").exists()
    refused = run([kernel_builder, "sign", kernel, "--key", key, "--variant", "torch-cpx"])
    assert refused.returncode == 1
    assert ('no built variant "torch-cpx" in "' in refused.stderr and
            '"; did you mean "torch-cpu"? (built variants: torch-cpu, torch-cuda)'
            in refused.stderr), refused.stderr


def test_build_and_upload_uploads_only_the_named_variant(kernel_builder, hub_server, tmp_path):
    kernel = noarch_kernel(tmp_path)
    env = dict(os.environ, **upload_env(hub_server, tmp_path))
    result = run([kernel_builder, "build-and-upload", kernel, "--variant", "torch-cpu",
                  "--python", PYTHON, "--repo-id", "me/pick"], env=env)
    assert result.returncode == 0, result.stderr
    files = files_on(hub_server, "me/pick", "v1")
    assert "build/torch-cpu/metadata.json" in files
    assert not any(f.startswith("build/torch-cuda/") for f in files)
