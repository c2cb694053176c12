# SPDX-License-Identifier: Apache-2.0
"""Deliberate difference: top-level kernel mappings under threads.

kernels 0.17.2 mutates one shared dict in place on every top-level register_kernel_mapping, so
a registration in one thread races with the deep copy an inheriting use_kernel_mapping makes
in another (`RuntimeError: dictionary changed size during iteration`) and with kernelize's
lookups. kernelhub publishes the shared mapping copy-on-write (layer/globals.py). The same
stress runs against both packages; ours must never fail, the reference's failures are printed,
not asserted (a race need not show in every run).
"""

import json
import subprocess
import sys
import textwrap

import pytest

STRESS = textwrap.dedent("""
    import json, sys, threading, time
    import torch
    package = __import__(sys.argv[1])

    class Kernel(torch.nn.Module):
        def forward(self, x):
            return x * 2

    class Repo:
        def __init__(self, name): self.name = name
        def load(self): return Kernel
        def __eq__(self, other): return isinstance(other, Repo) and other.name == self.name
        def __hash__(self): return hash(self.name)
        def __str__(self): return self.name

    @package.use_kernel_forward_from_hub("Stable")
    class Stable(torch.nn.Module):
        def forward(self, x):
            return x + 1

    package.register_kernel_mapping({"Stable": {"cpu": Repo("stable")}})
    model = torch.nn.Sequential(Stable())
    errors, stop = [], threading.Event()

    def register():
        try:
            for round_ in range(200):
                package.register_kernel_mapping(
                    {f"L{round_}_{i}": {"cpu": Repo(f"r{i}")} for i in range(20)})
        except Exception as error:
            errors.append(f"register: {type(error).__name__}: {error}")
        finally:
            stop.set()

    def read():
        while not stop.is_set():
            try:
                with package.use_kernel_mapping({"Scoped": {"cpu": Repo("scoped")}}):
                    package.kernelize(model, mode=package.Mode.INFERENCE, device="cpu")
                    if model(torch.ones(1)).item() != 2.0:
                        errors.append("read: the Stable mapping was not seen")
            except Exception as error:
                errors.append(f"read: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=register), threading.Thread(target=read),
               threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    with package.use_kernel_mapping({}):
        pass
    print(json.dumps({"errors": errors[:5], "count": len(errors)}))
""")


def run(package: str) -> dict:
    result = subprocess.run([sys.executable, "-c", STRESS, package], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_concurrent_top_level_registrations_never_break_readers():
    ours = run("kernelhub")
    reference = run("kernels")
    print(f"kernels 0.17.2 under the same stress: {reference['count']} failures "
          f"{reference['errors'][:2]}")
    assert ours == {"errors": [], "count": 0}
