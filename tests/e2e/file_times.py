# SPDX-License-Identifier: Apache-2.0
"""The suite's time per test file: the order the workers take files in, and where it goes.

The two xdist workers take whole files (--dist loadfile) from one queue. xdist's own order puts
the files with the most tests first, which left the few long build tests (test_build_*.py,
minutes each) to the end of the run, on one worker while the other sat idle. Taking the
longest files first instead (as measured in file_seconds.json) lets the short ones fill in
at the end, so the two workers finish together.

The run prints the seconds of its slowest files; KERNELHUB_FILE_SECONDS_OUT=<path> writes them
all, in the form of file_seconds.json, to refresh it after the suite has changed.
"""
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

MEASURED = Path(__file__).with_name("file_seconds.json")


def _file_of(nodeid: str) -> str:
    return Path(nodeid.split("::", 1)[0]).name


class FileTimes:
    def __init__(self):
        self.seconds = defaultdict(float)
        self.measured = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        if not self.measured:
            return
        # A file not measured yet (a new one) goes with the typical file.
        typical = sorted(self.measured.values())[len(self.measured) // 2]
        # Stable: each file's tests keep their order, and stay together.
        items.sort(key=lambda item: -self.measured.get(_file_of(item.nodeid), typical))

    def pytest_runtest_logreport(self, report):
        self.seconds[_file_of(report.nodeid)] += report.duration

    def pytest_terminal_summary(self, terminalreporter):
        if not self.seconds:
            return
        slowest = sorted(self.seconds.items(), key=lambda entry: -entry[1])
        terminalreporter.write_sep("=", "seconds per test file (setup, call and teardown)")
        for name, seconds in slowest[:25]:
            terminalreporter.write_line(f"{seconds:8.1f}s {name}")
        terminalreporter.write_line(f"{sum(self.seconds.values()):8.1f}s in all")
        out = os.environ.get("KERNELHUB_FILE_SECONDS_OUT")
        if out:
            Path(out).write_text(json.dumps(
                {name: round(seconds, 1) for name, seconds in sorted(self.seconds.items())},
                indent=1) + "\n")
