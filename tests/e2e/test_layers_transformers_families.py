# SPDX-License-Identifier: Apache-2.0
"""transformers for real (issue 21 §3): every model family in the installed transformers (5.22.2)
whose modules are decorated with `use_kernel_forward_from_hub`, built tiny on the CPU and
kernelized with kernelhub onto CPU layer kernels of ours, served by `kernelhub serve`.

The kernels are examples/rmsnorm ("RMSNorm"), examples/activation (GeLU, GeluTanh, NewGELU,
FastGELU, QuickGELU, SiLU), examples/rotary ("rotary_pos_emb", the function transformers
attaches to its attention modules) and examples/rmsnorm-variants (RMSNormGated,
RMSNormZeroCentered), built once per module by our `kernel-builder` and uploaded as version 1.
transformers_families_client.py runs every family in one interpreter (the imports of torch and
transformers dominate a run): per family, every module decorated with a mapped layer name must
have the kernel layer's forward afterwards, our ops must run, and the output must stay within
TOLERANCE of the plain model's. The table (family, layers kernelized, max |Δlogit|) is printed
and written to build/transformers-families.json.

Which families run, with which config fixes, and which are skipped and why, is the client's
FAMILIES/SKIPPED; test_every_decorated_family_is_run_or_skipped keeps them equal to what the
installed transformers decorates, so a new family is a failure here, not a silent gap.
"""
import json
import os
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, run, venv_torch
from layers_support import (EXAMPLES, ORG, PYTHON, ServedHub, build, find_nvcc, variants,
                            venv_python)
import transformers_families_client as client

CLIENT = REPO_ROOT / "tests" / "e2e" / "transformers_families_client.py"
KERNELS = ["rmsnorm", "activation", "rotary", "rmsnorm-variants"]
# Our kernels compute in float32 as the modules they replace do, but in another order (a row's
# sum of squares in double, x * sigmoid(x) as x / (1 + exp(-x))...): a few ulps per layer, which
# tiny random models amplify at most to a few 1e-6 in logits of magnitude ~1.
TOLERANCE = 1e-4
TORCH_CUDA = venv_torch().get("cuda", "")
TRANSFORMERS = venv_python("import transformers; print(transformers.__version__)")
TABLE = REPO_ROOT / os.environ.get("KERNELHUB_BUILD_DIR", "build") / "transformers-families.json"

pytestmark = [
    pytest.mark.skipif(not PYTHON.exists() or shutil.which("cmake") is None
                       or shutil.which("ninja") is None,
                       reason="needs the .venv with torch, cmake and ninja"),
    pytest.mark.skipif(TRANSFORMERS != "5.22.2",
                       reason=f"the family table is transformers 5.22.2's (.venv has "
                              f"{TRANSFORMERS or 'none'}; requirements-dev.txt pins it)"),
    pytest.mark.skipif(bool(TORCH_CUDA) and find_nvcc() is None,
                       reason="torch is a CUDA build, so the loader picks the kernels' cuda "
                              "variants, and building examples/rmsnorm's needs nvcc"),
]


def client_json(*args, env=None) -> dict:
    result = subprocess.run([str(PYTHON), str(CLIENT), *args], capture_output=True, text=True,
                            timeout=900, stdin=subprocess.DEVNULL, env=env)
    if result.returncode != 0:
        raise AssertionError(f"{CLIENT.name} {args[0]} failed ({result.returncode}):\n"
                             f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def loader_variant(kernel_builder) -> str:
    """The variant the loader picks here: the cuda one on a CUDA build of torch (GPU or not),
    else the cpu one. Only that one is built, so each kernel compiles once."""
    listing = json.loads(run([kernel_builder, "list-variants", EXAMPLES / "rmsnorm", "--json"],
                             check=True).stdout)
    backend = "cuda" if TORCH_CUDA else "cpu"
    names = [v["name"] for v in listing["variants"] if v["backend"] == backend and v["buildable"]]
    assert len(names) == 1, listing
    return names[0]


@pytest.fixture(scope="module")
def hub(kernel_builder, kernelhub_bin, tmp_path_factory):
    """The four kernels, built for the variant the loader picks, on one server."""
    base = tmp_path_factory.mktemp("families")
    variant = loader_variant(kernel_builder)
    served = ServedHub(kernelhub_bin, base)
    served.kernels = {}
    served.variant = variant
    try:
        for name in KERNELS:
            # Named as in test_layers_transformers.py, so ccache serves rmsnorm's objects.
            served.kernels[name] = build(kernel_builder, EXAMPLES / name, base / name,
                                         "--variant", variant)
            served.upload(kernel_builder, served.kernels[name], name)
        yield served
    finally:
        served.close()


def table_lines(report: dict) -> list:
    """The report as a Markdown table: per family, the modules now running our kernel layers
    out of those decorated, per layer name (an attached function counts once), the decorated
    names without a kernel of ours, and max |Δ| of the compared output."""
    lines = [f"transformers {report['transformers']}, torch {report['torch']}: "
             f"{len(report['families'])} families kernelized with kernelhub "
             f"({len(client.SKIPPED)} skipped, see transformers_families_client.SKIPPED)",
             "",
             "| family | model (output) | layers kernelized | no kernel of ours | max abs Δ |",
             "|---|---|---|---|---|"]
    for family, row in sorted(report["families"].items()):
        if "error" in row:
            lines.append(f"| {family} | error: {row['error'][:80]} | | | |")
            continue
        ours = ", ".join(f"{name} {e['kernelized']}/{e['decorated']}"
                         for name, e in row["layers"].items() if name in client.LAYERS)
        kept = ", ".join(name for name in row["layers"] if name not in client.LAYERS)
        lines.append(f"| {family} | {row['model']} ({row['output']}) | {ours} | {kept} | "
                     f"{row['max_abs_diff']:.1e} |")
    return lines


@pytest.fixture(scope="module")
def report(hub, request):
    """One run of every family; the table goes to the terminal and build/."""
    result = client_json("run", json.dumps({"org": ORG, "package": "kernelhub"}),
                         env=hub.client_env(hub.base / "families-home"))
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    # Printed past pytest's capture, so the table shows in every run, passing or not.
    capture = request.config.pluginmanager.getplugin("capturemanager")
    text = "\n".join(["", *table_lines(result), f"(written to {TABLE})"])
    if capture is None:
        print(text)
    else:
        with capture.global_and_fixture_disabled():
            print(text)
    return result


def test_every_decorated_family_is_run_or_skipped():
    found = client_json("enumerate")
    activations = found.pop("transformers.activations")
    assert set(activations) <= set(client.LAYERS), activations
    assert set(found) == set(client.FAMILIES) | set(client.SKIPPED), {
        "decorated but neither run nor skipped": sorted(set(found) - set(client.FAMILIES)
                                                        - set(client.SKIPPED)),
        "run or skipped but not decorated": sorted((set(client.FAMILIES) | set(client.SKIPPED))
                                                   - set(found))}
    assert not set(client.FAMILIES) & set(client.SKIPPED)
    names = {name for layers in found.values() for name in layers}
    assert names <= set(client.LAYERS) | set(client.UNMAPPED), names - set(client.LAYERS)


def test_the_kernels_pass_their_own_tests(hub, kernel_builder):
    # The three kernels added for this test; examples/rmsnorm's tests run in test_layers_gpu.py.
    # Their variants are CPU code whatever the backend, so the tests run without a GPU. The
    # three runs are independent: side by side they take the time of the longest.
    names = ["activation", "rotary", "rmsnorm-variants"]
    runs = {name: subprocess.Popen(
        [str(kernel_builder), "test", str(hub.kernels[name]), "--python", str(PYTHON),
         "--variant", hub.variant, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        for name in names}
    for name, process in runs.items():
        stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, f"{name}:\n{stdout}\n{stderr[-4000:]}"
        assert json.loads(stdout)["passed"] is True, stdout


def test_builds_have_the_variant_the_loader_picks(hub):
    for name in KERNELS:
        assert variants(hub.kernels[name]) == [hub.variant], name


def test_every_layer_name_and_op_of_ours_runs_somewhere(report):
    rows = [row for row in report["families"].values() if "error" not in row]
    for name in client.LAYERS:
        assert any(row["layers"].get(name, {}).get("kernelized") for row in rows), name
    ran = {op for row in rows for op in row["op_calls"]}
    assert ran == {"rms_norm", "rms_norm_gated", "rms_norm_zero_centered", "apply_rotary",
                   "silu", "gelu", "gelu_tanh", "quick_gelu"}, ran


@pytest.mark.parametrize("family", sorted({**client.FAMILIES, **client.ACTIVATION_FAMILIES}))
def test_family_is_kernelized_and_keeps_its_logits(report, family):
    row = report["families"][family]
    assert "error" not in row, row.get("traceback", row.get("error"))
    layers = row["layers"]
    assert layers, f"{family}: no decorated module in {row['model']}"
    overrides = client.LAYER_OVERRIDES.get(family, {})
    for name, entry in layers.items():
        if name in client.LAYERS:
            kernel = overrides.get(name, client.LAYERS[name])[0]
            assert entry["kernelized"] == entry["decorated"] > 0, (family, name, entry)
            assert entry["kernels"] == [kernel], (family, name, entry)
        else:
            # No kernel of ours for it: kernelize's fallback keeps the module's own forward.
            assert name in client.UNMAPPED and entry["kernelized"] == 0, (family, name, entry)
    if family in client.IDLE:
        assert row["op_calls"] == {}, (family, row["op_calls"])
    else:
        assert sum(row["op_calls"].values()) > 0, f"{family}: none of our ops ran"
    assert row["finite"], row
    assert row["max_abs_diff"] <= TOLERANCE, (family, row["max_abs_diff"], row["max_abs_output"])
