# SPDX-License-Identifier: Apache-2.0
"""Run by test_layer_module_members.py in a fresh interpreter:

    python layer_members_client.py <package> <kernel folder>

<package> is `kernelhub` or the reference `kernels`. A first `kernelize` validates a kernel
layer while `nn.Module` has only torch's members; then transformers builds a tiny Llama, which
adds `nn.Module.smart_apply`; kernelizing that model with a local RMSNorm layer must still pass
the layer validation. Prints one JSON line: whether transformers added a member, and per
LlamaRMSNorm module whether its forward is now the kernel's (or the error)."""
import importlib
import json
import sys
from pathlib import Path

import torch
from torch import nn

pkg = importlib.import_module(sys.argv[1])
kernel = Path(sys.argv[2])
members_before = set(dir(nn.Module))


@pkg.use_kernel_forward_from_hub("Double")
class Identity(nn.Module):
    def forward(self, x):
        return x


with pkg.use_kernel_mapping({"Double": {"cpu": pkg.LocalLayerRepository(
        kernel, layer_name="Double")}}):
    first = pkg.kernelize(Identity(), mode=pkg.Mode.INFERENCE, device="cpu")
first_result = first(torch.ones(2)).tolist()

from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(
    vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)).eval()
added = sorted(set(dir(nn.Module)) - members_before)
ids = torch.randint(0, 128, (1, 8))
with torch.no_grad():
    plain = model(input_ids=ids, use_cache=False).logits
try:
    with pkg.use_kernel_mapping({"RMSNorm": {"cpu": pkg.LocalLayerRepository(
            kernel, layer_name="RMSNorm")}}):
        pkg.kernelize(model, mode=pkg.Mode.INFERENCE, device="cpu")
    outcome = "ok"
except Exception as exc:  # noqa: BLE001 - the error is the result
    outcome = f"{type(exc).__name__}: {exc}"
norms = [type(m).__name__ for m in model.modules() if type(m).__name__ == "LlamaRMSNorm"]
kernel_forwards = [m.forward.__func__.__qualname__ for m in model.modules()
                   if type(m).__name__ == "LlamaRMSNorm" and "forward" in m.__dict__]
with torch.no_grad():
    kernelized = model(input_ids=ids, use_cache=False).logits
print(json.dumps({"first": first_result, "added": added, "outcome": outcome,
                  "norms": len(norms), "kernel_forwards": kernel_forwards,
                  "max_abs_diff": (kernelized - plain).abs().max().item()}))
