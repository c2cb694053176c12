# SPDX-License-Identifier: Apache-2.0
"""Copies a static archive from Debian's -dev packages with its glibc references pinned.

Debian's archives were compiled against glibc 2.36, so their objects refer to functions such
as pthread_create or dlopen by name, and a link binds those names to their newest versions
(GLIBC_2.34), which glibc 2.28 lacks. This renames each such reference to `name@GLIBC_x`, the
newest version at or below 2.28 (the table of templates/project/compat/glibc_pins.h, the same
pins kernel builds force into every source with -include): the linker then treats it as a
versioned reference, exactly as if the object had been compiled with the pins header.

usage: pin_archive.py --pins glibc_pins.h --objcopy OBJCOPY INPUT.a OUTPUT.a
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PIN = re.compile(r'KERNELHUB_GLIBC_PIN\((\w+), "([0-9.]+)", "([0-9.]+)"\)')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pins", required=True)
    parser.add_argument("--objcopy", default="objcopy")
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args()
    pins = {match.group(1): match.group(2) for match in PIN.finditer(Path(args.pins).read_text())}
    if not pins:
        print(f"pin_archive: no pins in {args.pins}", file=sys.stderr)
        return 1
    output = Path(args.output)
    with tempfile.TemporaryDirectory(dir=output.parent) as work:
        renames = Path(work) / "pins.txt"
        renames.write_text("".join(f"{name} {name}@GLIBC_{version}\n"
                                   for name, version in sorted(pins.items())))
        staged = Path(work) / output.name
        subprocess.run([args.objcopy, f"--redefine-syms={renames}", args.input, str(staged)],
                       check=True)
        staged.replace(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
