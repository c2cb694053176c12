# SPDX-License-Identifier: Apache-2.0
"""check-abi on variants our own builder produces, against the reference `kernel-abi-check`.

This completes the differential corpus of test_check_abi.py (torch's libraries and
test-time snippets) with real build output: examples/relu built for cpu by
`kernel-builder build`. The verdicts must be the same under every policy the reference
knows, and `check-abi DIR` must find the variant's library through variant discovery.
"""
import shutil
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, example_unique_id, run
from test_check_abi import REFERENCE_POLICIES, our_findings, ours, reference_findings

kernel_abi_check = pytest.importorskip("kernel_abi_check")
# A fixed id, so the rebuilds below recompile nothing (an uncommitted kernel would get a new id,
# so a new project, every build), and the example's (with ccache paths relative to the copy,
# the compiles are ccache hits of conftest's built_example("relu", ["cpu"])).
UNIQUE_ID = ["--unique-id", example_unique_id("relu")]


@pytest.fixture(scope="module")
def built_relu(kernel_builder, tmp_path_factory):
    kernel_dir = tmp_path_factory.mktemp("abi-built") / "relu"
    shutil.copytree(REPO_ROOT / "examples" / "relu", kernel_dir)
    # cpu only: the example's cuda kernel has its own test (test_build_cuda.py).
    toml = kernel_dir / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu"]'))
    run([kernel_builder, "build", kernel_dir, "--python", sys.executable, "--abi-check", "off",
         *UNIQUE_ID], env={"CCACHE_BASEDIR": str(kernel_dir)}, check=True)
    libraries = sorted((kernel_dir / "build").glob("torch*-cpu-*/*.abi3.so"))
    assert len(libraries) == 1, libraries
    return kernel_dir, libraries[0]


@pytest.mark.parametrize("policy", REFERENCE_POLICIES)
def test_built_variant_matches_reference(kernel_builder, built_relu, policy):
    kernel_dir, library = built_relu
    report = ours(kernel_builder, [str(kernel_dir)], "--manylinux", policy)
    assert report["libraries"] == [str(library)]
    expected = reference_findings(kernel_abi_check.ObjectFile(str(library)), manylinux=policy)
    assert our_findings(report, library) == expected


def test_built_variant_is_abi3_clean(kernel_builder, built_relu):
    # The module is built with Py_LIMITED_API: no Python symbol outside the stable ABI.
    kernel_dir, library = built_relu
    report = ours(kernel_builder, [str(kernel_dir)])
    assert not [v for v in report["violations"] if v["rule"] == "python-abi"], report


def test_built_variant_meets_manylinux_2_28(kernel_builder, built_relu):
    # The build pins glibc symbols and keeps libstdc++'s __libc_single_threaded inside the
    # kernel (docs/build.md), so the variant passes the default policy on this newer glibc,
    # for us and for the reference alike.
    kernel_dir, library = built_relu
    report = ours(kernel_builder, [str(kernel_dir)])
    assert report["ok"] and report["violations"] == [], report["violations"]
    assert reference_findings(kernel_abi_check.ObjectFile(str(library))) == set()


def test_build_runs_the_abi_check_on_its_variants(kernel_builder, built_relu):
    # `build` checks every native variant it produces and fails on violations by default
    # (--abi-check error); --abi-check warn only reports them. A clean kernel passes both.
    kernel_dir, library = built_relu
    strict = run([kernel_builder, "build", kernel_dir, "--python", sys.executable, *UNIQUE_ID])
    assert strict.returncode == 0, strict.stderr
    assert "ABI violation" not in strict.stderr
    lenient = run([kernel_builder, "build", kernel_dir, "--python", sys.executable,
                   "--abi-check", "warn", *UNIQUE_ID])
    assert lenient.returncode == 0, lenient.stderr
