# SPDX-License-Identifier: Apache-2.0
"""Scenarios of the layer API, run by test_layer_differential.py once under the reference
`kernels` 0.17.2 and once under `kernelhub`, each in a fresh interpreter:

    python layer_scenarios.py <package> <group> <workdir>

The package under test is only reached through `importlib.import_module(<package>)` (and its
`layer` submodule), so the same code exercises both. Every scenario returns plain JSON data:
return values, the `forward` each module ended up with (a label, see `describe`), errors as
[`"error"`, qualified class name, `str(e)`], the log records it produced (logger, level, message)
and the Python warnings it raised. The last stdout line is one JSON object
{scenario: {"result", "logs", "warnings"}}.

Isolation: every scenario runs in a fresh `contextvars.Context` and uses layer names, repository
labels and classes of its own, so a mapping registered by one scenario (top-level
registrations go to the reference's shared default dict) cannot change another's result.
Capabilities of simulated CUDA/ROCm devices come from replacing
`<package>.layer.repos._find_capability`.

The scenarios live in one module per area, each registering with `@scenario`:
layer_scenarios_api (names, signatures, Mode, Device), _mappings (registration, contexts,
threads, separate-process checks), _kernelize (mode and capability selection, failures,
validation), _models (small models, functions, interop) and _repos (local, locked, dependent
and hub repositories). layer_scenarios_common holds what they share; this file runs them.
"""
from __future__ import annotations

import contextvars
import importlib
import json
import logging
import sys
import traceback
import warnings
from pathlib import Path

import layer_scenarios_common as common
# Scenarios run in registration order, so the area modules are imported in a fixed order (the
# shared_default scenarios register into one process-wide mapping).
import layer_scenarios_api
import layer_scenarios_mappings
import layer_scenarios_kernelize
import layer_scenarios_models
import layer_scenarios_repos
from layer_scenarios_common import (
    CURRENT, INTEROP, ORIGINAL_CAPABILITY, SCENARIOS, SHARED_DEFAULT, attempt, error, layer_mod,
    make_kernels, norm,
)
from layer_scenarios_repos import _write_locks, make_dep_kernels, make_lock_user_package

PKG = None  # the package under test and its import name: set by bind_package
NAME = ""

# Modules whose scenarios and helpers read the package under test as module globals.
SCENARIO_MODULES = (common, layer_scenarios_api, layer_scenarios_mappings,
                    layer_scenarios_kernelize, layer_scenarios_models, layer_scenarios_repos)


# ------------------------------------------------------------------------------------------
# Runner


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        name = record.name
        if name == "root" or name == NAME or name.startswith(NAME + "."):
            self.records.append([norm(name), record.levelname, record.getMessage()])
        elif name == "kernels" or name.startswith("kernels."):
            # the reference logging while the package under test runs: only expected where
            # the scenario itself calls the reference
            prefix = "PKG" if CURRENT[0] in INTEROP else "REFERENCE"
            self.records.append([prefix + name[len("kernels"):], record.levelname,
                                 record.getMessage()])


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_one(fn, capture):
    capture.records = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if fn.__name__ not in SHARED_DEFAULT:
                # an empty mapping set in this scenario's own context only
                PKG.register_kernel_mapping({}, inherit_mapping=False)
                if fn.__name__ in INTEROP and NAME != "kernels":
                    importlib.import_module("kernels").register_kernel_mapping(
                        {}, inherit_mapping=False)
            result = jsonable(fn())
        except Exception as exc:  # noqa: BLE001
            result = {"scenario crashed": error(exc), "traceback": traceback.format_exc()}
        finally:
            repos = sys.modules.get(f"{NAME}.layer.repos")
            if repos is not None and ORIGINAL_CAPABILITY:
                repos._find_capability = ORIGINAL_CAPABILITY[0]
    return {"result": result, "logs": list(capture.records),
            "warnings": [[w.category.__name__, str(w.message)] for w in caught]}


def bind_package(**names):
    """Sets the package under test and its context (PKG, NAME, ROOT, torch, nn) as globals of
    this runner and of every scenario module, whose functions read them at call time."""
    for module in (sys.modules[__name__], *SCENARIO_MODULES):
        for key, value in names.items():
            setattr(module, key, value)


def main():
    name, group, root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    import torch

    bind_package(NAME=name, ROOT=root, torch=torch, nn=torch.nn)
    capture = Capture()
    if group != "rootlog":
        logging.getLogger().addHandler(capture)
        logging.getLogger().setLevel(logging.DEBUG)
    make_kernels(root)
    _write_locks(root)
    make_lock_user_package(root)
    make_dep_kernels(root)
    bind_package(PKG=importlib.import_module(name))
    repos = attempt(layer_mod, ".repos")
    if repos[0] == "ok":
        ORIGINAL_CAPABILITY.append(repos[1]._find_capability)
    results = {}
    for scenario_name, (g, fn) in SCENARIOS.items():
        if g != group:
            continue
        CURRENT[0] = scenario_name
        results[scenario_name] = contextvars.Context().run(run_one, fn, capture)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
