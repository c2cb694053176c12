# SPDX-License-Identifier: Apache-2.0
"""A pytest plugin (`-p refsuite_results`) that writes each test's outcome to the JSON file
named by REFSUITE_RESULTS: node id -> {"outcome": passed|failed|error|skipped, "message"}.
Collection errors are recorded under the module's node id, with outcome "error"."""
import json
import os

_results = {}


def _message(report) -> str:
    if report.longrepr is None:
        return ""
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
        return str(report.longrepr[2])
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    return str(report.longrepr).strip().splitlines()[-1] if str(report.longrepr).strip() else ""


def pytest_runtest_logreport(report):
    entry = _results.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.skipped:
        if entry["outcome"] == "passed":
            entry.update(outcome="skipped", message=_message(report))
    elif report.failed:
        if entry["outcome"] in ("passed", "skipped"):
            entry.update(outcome="failed" if report.when == "call" else "error",
                         message=_message(report))


def pytest_collectreport(report):
    if report.failed:
        _results[report.nodeid] = {"outcome": "error", "message": _message(report)}


def pytest_sessionfinish(session):
    path = os.environ.get("REFSUITE_RESULTS")
    if path:
        with open(path, "w") as out:
            json.dump(_results, out, indent=1, sort_keys=True)
