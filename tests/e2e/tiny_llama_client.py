# SPDX-License-Identifier: Apache-2.0
"""A tiny transformers Llama kernelized with the rmsnorm example's layers, run by
test_layers_transformers.py and test_layers_gpu.py in a fresh interpreter:

    python tiny_llama_client.py <package> <scenario> <json arguments>

<package> is `kernelhub` or the reference `kernels`; both are reached only through
`importlib.import_module`, so one scenario exercises either. huggingface_hub reads HF_ENDPOINT
when it is imported, which is why every run is its own process. A scenario raises on a wrong
result (the logits are compared here, with torch.testing.assert_close) and prints one JSON
object as its last stdout line: which forward each decorated module ended up with and how often
the kernel's ops ran.

The model is built from a LlamaConfig with a fixed seed; nothing is downloaded. Its RMSNorm
weights are randomized (they start as ones), so a kernel that ignored them would be caught.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# The layer names transformers 5.22.2 decorates Llama's modules with, and the kernel layer
# (examples/rmsnorm, torch-ext/rmsnorm/layers.py) mapped to each.
LAYERS = {"RMSNorm": "RMSNorm", "SiLU": "SiLU"}
# 2 decoder layers: two norms each plus the final norm; one MLP activation each.
EXPECTED_CALLS = {"rms_norm": 5, "silu": 2}


def build_model(device: str = "cpu"):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, rms_norm_eps=1e-5)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for module in model.modules():
            if type(module).__name__ == "LlamaRMSNorm":
                module.weight.copy_(1.0 + 0.5 * torch.randn_like(module.weight))
    return model.to(device)


def sample_input(device: str = "cpu"):
    generator = torch.Generator().manual_seed(1)
    return torch.randint(0, 128, (2, 12), generator=generator).to(device)


def logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids, use_cache=False).logits


def kernel_op(name: str) -> str | None:
    """"rms_norm"/"silu" for the rmsnorm kernel's ops (namespace `_rmsnorm_<backend>_<id>`),
    None for anything else, torch's own aten::silu included."""
    namespace, _, op = name.partition("::")
    op = op.split(".")[0]
    return op if namespace.startswith("_rmsnorm_") and op in EXPECTED_CALLS else None


class CountKernelOps(TorchDispatchMode):
    """Counts the calls of the kernel's ops that reach the dispatcher."""

    def __init__(self):
        super().__init__()
        self.calls = {op: 0 for op in EXPECTED_CALLS}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        op = kernel_op(func._schema.name)
        if op is not None:
            self.calls[op] += 1
        return func(*args, **(kwargs or {}))


def forwards(model) -> dict:
    """{layer name: sorted distinct "module:qualname" of the forwards its modules now have}."""
    found: dict = {}
    for module in model.modules():
        name = getattr(type(module), "kernel_layer_name", None)
        if name not in LAYERS:
            continue
        function = getattr(module.forward, "__func__", module.forward)
        found.setdefault(name, set()).add(f"{function.__module__}:{function.__qualname__}")
    return {name: sorted(values) for name, values in found.items()}


def mapping_for(pkg, make_repository, device):
    return {layer: {device: make_repository(kernel_layer)} for layer, kernel_layer in LAYERS.items()}


def run_kernelized(pkg, model, ids, mode, device, compile_model=False):
    """Kernelizes `model` with the mapping now in force, runs it and returns the report."""
    expected = logits(model, ids)
    pkg.kernelize(model, mode=mode, device=device)
    report = {"forwards": forwards(model)}
    if compile_model:
        seen = []

        def recording_backend(graph_module, example_inputs):
            # The graph Dynamo captured: the kernel's ops must be in it, not graph breaks
            # around them (fullgraph=True would fail on those anyway).
            for node in graph_module.graph.nodes:
                target = node.target
                name = getattr(target, "_qualified_op_name", None)
                if name is None and hasattr(target, "_schema"):
                    name = target._schema.name
                if name and kernel_op(name):
                    seen.append(kernel_op(name))
            from torch._inductor.compile_fx import compile_fx

            return compile_fx(graph_module, example_inputs)

        compiled = torch.compile(model, fullgraph=True, backend=recording_backend)
        got = logits(compiled, ids)
        report["graph_calls"] = {op: seen.count(op) for op in EXPECTED_CALLS}
    else:
        counter = CountKernelOps()
        with counter:
            got = logits(model, ids)
        report["calls"] = counter.calls
    torch.testing.assert_close(got, expected)
    report["max_abs_diff"] = float((got - expected).abs().max())
    return report


def scenario_hub(pkg, args):
    """LayerRepository(version=1) through use_kernel_mapping."""
    model, ids = build_model(args["device"]), sample_input(args["device"])
    mapping = mapping_for(pkg, lambda layer: pkg.LayerRepository(
        args["repo_id"], layer_name=layer, version=1), args["device"])
    with pkg.use_kernel_mapping(mapping, inherit_mapping=False):
        return run_kernelized(pkg, model, ids, pkg.Mode.INFERENCE, args["device"])


def scenario_lock(pkg, args):
    """LockedLayerRepository(lockfile=kernels.lock) through register_kernel_mapping."""
    model, ids = build_model(args["device"]), sample_input(args["device"])
    lockfile = Path(args["lockfile"])
    repositories = {layer: pkg.LockedLayerRepository(args["repo_id"], lockfile=lockfile,
                                                     layer_name=layer)
                    for layer in LAYERS.values()}
    pkg.register_kernel_mapping(mapping_for(pkg, repositories.__getitem__, args["device"]))
    report = run_kernelized(pkg, model, ids, pkg.Mode.INFERENCE, args["device"])
    report["repository"] = str(repositories["RMSNorm"])
    return report


def scenario_compile(pkg, args):
    """Mode.INFERENCE | Mode.TORCH_COMPILE, then torch.compile(fullgraph=True)."""
    model, ids = build_model(args["device"]), sample_input(args["device"])
    mapping = mapping_for(pkg, lambda layer: pkg.LayerRepository(
        args["repo_id"], layer_name=layer, version=1), args["device"])
    with pkg.use_kernel_mapping(mapping, inherit_mapping=False):
        return run_kernelized(pkg, model, ids, pkg.Mode.INFERENCE | pkg.Mode.TORCH_COMPILE,
                              args["device"], compile_model=True)


def scenario_capability(pkg, args):
    """CUDA capability ranges: the range holding exactly the device's capability maps to the
    real layers; a wider range and a range above it map to a layer name the kernel does not
    have, which would fail the load if chosen.

    On a real device (the default) the model runs there. With "simulated_capability" the
    package's capability probe is replaced and the model stays on the CPU, which the kernel's
    variants serve too: only the mapping's choice looks at the device type."""
    if "simulated_capability" in args:
        capability = args["simulated_capability"]
        repos = importlib.import_module(f"{pkg.__name__}.layer.repos")
        repos._find_capability = lambda: capability
        model_device = "cpu"
    else:
        major, minor = torch.cuda.get_device_capability()
        capability = major * 10 + minor
        model_device = "cuda"
    model, ids = build_model(model_device), sample_input(model_device)

    def repository(layer):
        return pkg.LayerRepository(args["repo_id"], layer_name=layer, version=1)

    mapping = {}
    for layer, kernel_layer in LAYERS.items():
        mapping[layer] = {
            pkg.Device("cuda", properties=pkg.CUDAProperties(min_capability=0,
                                                             max_capability=10_000)):
                repository("NoSuchLayer"),
            pkg.Device("cuda", properties=pkg.CUDAProperties(min_capability=capability,
                                                             max_capability=capability)):
                repository(kernel_layer),
            pkg.Device("cuda", properties=pkg.CUDAProperties(min_capability=capability + 1,
                                                             max_capability=10_000)):
                repository("NoSuchLayer"),
        }
    with pkg.use_kernel_mapping(mapping, inherit_mapping=False):
        report = run_kernelized(pkg, model, ids, pkg.Mode.INFERENCE, "cuda")
    report["capability"] = capability
    return report


def scenario_deps(pkg, args):
    """get_kernel of a kernel whose import calls get_kernel_dep for its kernel-depends."""
    user = pkg.get_kernel(args["user_repo_id"], version=1)
    base = user.base
    x = torch.linspace(-2, 2, 9)
    torch.testing.assert_close(user.affine_twice(x, 3.0, 0.5), (x * 3.0 + 0.5) * 3.0 + 0.5)
    try:
        pkg.get_kernel_dep(args["base_repo_id"])
        outside = None
    except RuntimeError as error:
        outside = str(error)
    return {
        "base_name": base.NAME,
        "base_module": base.__name__,
        "user_module": user.__name__,
        "base_in_sys_modules": sys.modules.get(base.__name__) is base,
        "outside_loading": outside,
    }


SCENARIOS = {"hub": scenario_hub, "lock": scenario_lock, "compile": scenario_compile,
             "capability": scenario_capability, "deps": scenario_deps}


def main() -> None:
    package, scenario, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    pkg = importlib.import_module(package)
    result = SCENARIOS[scenario](pkg, arguments)
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
