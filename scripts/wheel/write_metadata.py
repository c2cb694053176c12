# SPDX-License-Identifier: Apache-2.0
"""Writes the .dist-info of kernelhub's wheel (METADATA, WHEEL, entry_points.txt) from
python/pyproject.toml, so the wheel and `pip install ./python` describe the same project.
`python -m wheel pack` then adds RECORD.

usage: write_metadata.py --pyproject python/pyproject.toml --version 0.1.0
                         --tag cp311-cp311-linux_x86_64 [--readme README.md] DIST_INFO_DIR
"""
import argparse
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pyproject", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--readme")
    parser.add_argument("dist_info")
    args = parser.parse_args()
    project = tomllib.loads(Path(args.pyproject).read_text())["project"]
    if project["version"] != args.version:
        print(f"write_metadata: {args.pyproject} says version {project['version']}, "
              f"CMakeLists.txt says {args.version}", file=sys.stderr)
        return 1
    out = Path(args.dist_info)
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"License: {project['license']['text']}",
        f"Requires-Python: {project['requires-python']}",
    ]
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    body = ""
    if args.readme:
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + Path(args.readme).read_text()
    (out / "METADATA").write_text("\n".join(lines) + "\n" + body)
    (out / "WHEEL").write_text(
        "Wheel-Version: 1.0\n"
        "Generator: kernelhub scripts/build-wheels.sh\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {args.tag}\n")
    entry_points = project.get("entry-points", {})
    text = ""
    for group, entries in entry_points.items():
        text += f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
    scripts = project.get("scripts", {})
    if scripts:
        text += "[console_scripts]\n" + "".join(f"{n} = {t}\n" for n, t in scripts.items())
    if text:
        (out / "entry_points.txt").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
