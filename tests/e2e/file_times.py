# SPDX-License-Identifier: Apache-2.0
"""The suite's time per test file: the order the workers take files in, and where it goes.

The two xdist workers take whole files (--dist loadfile) from one queue. xdist's own order puts
the files with the most tests first, which left the few long build tests (test_build_*.py,
minutes each) to the end of the run, on one worker while the other sat idle. Taking the
longest files first instead (as measured in file_seconds.json) lets the short ones fill in
at the end, so the two workers finish together.

The run prints the seconds of its slowest files; KERNELHUB_FILE_SECONDS_OUT=<path> writes them
all, in the form of file_seconds.json, to refresh it after the suite has changed.

It also prints each file's CPU seconds: the worker's own and those of the processes it started
and waited for (getrusage), which on a 2-core machine is what the run's length follows: a test
waiting on a server or a sleep costs wall time but leaves the core to the other worker. A child
still running when a test ends (a module's server) counts for the test that waits for it.
"""
import json
import os
import resource
from collections import defaultdict
from pathlib import Path

import pytest

MEASURED = Path(__file__).with_name("file_seconds.json")


def _file_of(nodeid: str) -> str:
    return Path(nodeid.split("::", 1)[0]).name


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its waited-for children, user and system."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class FileTimes:
    def __init__(self):
        self.seconds = defaultdict(float)
        self.cpu = defaultdict(float)
        self._cpu_mark = None
        self.measured = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        if not self.measured:
            return
        # A file not measured yet (a new one) goes with the typical file.
        typical = sorted(self.measured.values())[len(self.measured) // 2]
        # Stable: each file's tests keep their order, and stay together.
        items.sort(key=lambda item: -self.measured.get(_file_of(item.nodeid), typical))

    # In the process that runs the test (an xdist worker): each phase's CPU seconds ride on its
    # report (user_properties travel to the controller) to be summed where the report is logged.
    def pytest_runtest_logstart(self, nodeid, location):
        self._cpu_mark = _cpu_seconds()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        now = _cpu_seconds()
        if self._cpu_mark is not None:
            report.user_properties.append(("cpu_seconds", now - self._cpu_mark))
        self._cpu_mark = now

    def pytest_runtest_logreport(self, report):
        self.seconds[_file_of(report.nodeid)] += report.duration
        for name, value in report.user_properties:
            if name == "cpu_seconds":
                self.cpu[_file_of(report.nodeid)] += value

    def pytest_terminal_summary(self, terminalreporter):
        if not self.seconds:
            return
        slowest = sorted(self.seconds.items(), key=lambda entry: -entry[1])
        terminalreporter.write_sep(
            "=", "seconds per test file (setup, call and teardown): wall, CPU (own and children)")
        for name, seconds in slowest[:25]:
            terminalreporter.write_line(f"{seconds:8.1f}s {self.cpu.get(name, 0.0):8.1f}s {name}")
        terminalreporter.write_line(
            f"{sum(self.seconds.values()):8.1f}s {sum(self.cpu.values()):8.1f}s in all")
        busiest = sorted(self.cpu.items(), key=lambda entry: -entry[1])
        terminalreporter.write_sep("=", "CPU seconds per test file, the busiest")
        for name, seconds in busiest[:25]:
            terminalreporter.write_line(f"{seconds:8.1f}s {name}")
        out = os.environ.get("KERNELHUB_FILE_SECONDS_OUT")
        if out:
            Path(out).write_text(json.dumps(
                {name: round(seconds, 1) for name, seconds in sorted(self.seconds.items())},
                indent=1) + "\n")
