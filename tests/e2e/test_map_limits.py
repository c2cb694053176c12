# SPDX-License-Identifier: Apache-2.0
"""The map stays a map (issue 26): no source file under src/ grows past 600 lines (detail about
a file belongs in the file, split along its seams before it gets that long), and each layer's
row in ARCHITECTURE.md's layer table stays a sentence or two (at most 400 characters); the
detail moves into the opening comments of the files it describes. Pure file reading."""
import re

from conftest import REPO_ROOT

MAX_SOURCE_LINES = 600
MAX_LAYER_ROW_CHARS = 400
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".c", ".inc"}


def _source_files():
    return sorted(p for p in (REPO_ROOT / "src").rglob("*")
                  if p.is_file() and p.suffix in SOURCE_SUFFIXES)


def _layer_rows(text: str) -> list[str]:
    """The body rows of the first Markdown table whose header's first cell is `layer`."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        cells = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells and cells[0] == "layer":
            rows = []
            for row in lines[index + 2:]:
                if not row.lstrip().startswith("|"):
                    break
                rows.append(row.strip())
            return rows
    return []


def test_every_source_file_is_at_most_600_lines():
    files = _source_files()
    assert len(files) > 100, f"found only {len(files)} source files under src/"
    long = []
    for path in files:
        with path.open("rb") as handle:
            count = sum(1 for _ in handle)
        if count > MAX_SOURCE_LINES:
            long.append(f"{path.relative_to(REPO_ROOT)}: {count} lines")
    assert not long, (f"source files over {MAX_SOURCE_LINES} lines (split them along their "
                      "seams):\n" + "\n".join(long))


def test_every_layer_row_of_architecture_md_is_at_most_400_characters():
    rows = _layer_rows((REPO_ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    layers = [re.sub(r"[`|]", "", row.strip("|").split("|")[0]).strip() for row in rows]
    # The layers of src/kernelhub/ each have a row (the check cannot pass on a lost table).
    folders = {p.name for p in (REPO_ROOT / "src" / "kernelhub").iterdir()
               if p.is_dir() and (p / "CMakeLists.txt").exists()}
    missing = sorted(folders - set(layers))
    assert not missing, f"layers without a row in ARCHITECTURE.md's layer table: {missing}"
    long = [f"{layer}: {len(row)} characters" for layer, row in zip(layers, rows)
            if len(row) > MAX_LAYER_ROW_CHARS]
    assert not long, (f"layer rows over {MAX_LAYER_ROW_CHARS} characters (move the detail into "
                      "the files' opening comments):\n" + "\n".join(long))


def test_layer_row_reader_reads_a_table():
    text = ("intro\n\n| layer | knows about | holds |\n|---|---|---|\n"
            "| `a` | x | y |\n| `b` | z | w |\n\nafter\n")
    assert _layer_rows(text) == ["| `a` | x | y |", "| `b` | z | w |"]
