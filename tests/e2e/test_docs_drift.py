# SPDX-License-Identifier: Apache-2.0
"""The docs match the code they describe.

- docs/cli.md is exactly what the binaries generate from their command tables.
- docs/build-toml.md documents exactly the keys, values and lists the reference reader
  (kernels' `Build.open`, built on kernels-data) accepts, and its examples are valid files.
"""
import difflib
import json
import re
import tempfile
from pathlib import Path

import pytest

from conftest import REPO_ROOT, run

CLI_MD = REPO_ROOT / "docs" / "cli.md"
FIX = "docs/cli.md is stale: run scripts/update-docs.sh and commit the result"


def _diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        "docs/cli.md", "generate-docs", n=1,
    )
    return "".join(list(lines)[:60])


@pytest.mark.parametrize("program", ["kernel_builder", "kernelhub_bin"])
def test_generated_reference_matches_docs(program, request):
    binary = request.getfixturevalue(program)
    generated = run([binary, "generate-docs"], check=True).stdout
    committed = CLI_MD.read_text(encoding="utf-8")
    assert generated == committed, f"{FIX}\n{_diff(committed, generated)}"


def test_output_flag_writes_the_same_bytes(kernel_builder, tmp_path):
    target = tmp_path / "cli.md"
    run([kernel_builder, "generate-docs", "--output", target], check=True)
    printed = run([kernel_builder, "generate-docs"], check=True).stdout
    assert target.read_text(encoding="utf-8") == printed


def test_json_and_markdown_describe_the_same_commands(kernel_builder):
    model = json.loads(run([kernel_builder, "generate-docs", "--json"], check=True).stdout)
    markdown = run([kernel_builder, "generate-docs"], check=True).stdout

    def walk(command):
        yield command
        for sub in command["commands"]:
            yield from walk(sub)

    paths = [c["path"] for p in model["programs"] for c in walk(p)]
    assert [p["path"] for p in model["programs"]] == ["kernel-builder", "kernelhub"]
    headings = [line.split("`")[1] for line in markdown.splitlines()
                if line.startswith("#") and "`" in line]
    assert headings == paths


def test_hidden_commands_are_not_documented(kernel_builder):
    markdown = run([kernel_builder, "generate-docs"], check=True).stdout
    for program in ("kernel-builder", "kernelhub"):
        assert f"# `{program} generate-docs`" not in markdown  # no section
        assert f"[`{program} generate-docs`]" not in markdown  # no index entry
    # ...but they still run and still answer --help.
    assert run([kernel_builder, "generate-docs", "--help"]).returncode == 0


# --- docs/build-toml.md against the reference reader ------------------------------------------
#
# The key tables of docs/build-toml.md are parsed and compared with what the reference
# (kernels' `Build.open`, the kernels-data reader) accepts: its "Unknown field ... Expected one
# of ..." message lists every key of a table, so a key the docs miss, invent or misspell fails
# here. The same files then go through our own `kernel-builder check-config`.

BUILD_TOML_MD = REPO_ROOT / "docs" / "build-toml.md"
KERNEL_BACKENDS = ["cpu", "cuda", "metal", "rocm", "xpu"]
DEPENDS_ENTRY = "kernel-depends entry"


def _doc_tables() -> dict[str, list[dict[str, str]]]:
    """Heading table name ("general.cuda", "kernel.<name>", ...) -> the rows of its key table."""
    tables: dict[str, list[dict[str, str]]] = {}
    current = None
    header = None
    for line in BUILD_TOML_MD.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            named = re.search(r"`\[([^\]]+)\]`", line)
            current = named.group(1) if named else None
            if line.strip() == "### Kernel dependencies":
                current = DEPENDS_ENTRY
            header = None
        elif line.startswith("| key |") and current is not None:
            header = [cell.strip() for cell in line.strip("|").split("|")]
            tables.setdefault(current, [])
        elif line.startswith("| `") and header is not None:
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip("|"))]
            row = dict(zip(header, cells))
            row["key"] = row["key"].strip("`")
            tables[current].append(row)
        elif not line.startswith("|"):
            header = None
    return tables


def documented_keys() -> dict[str, list[str]]:
    """Table -> documented keys; [kernel.<name>] is split per backend ("kernel:cuda")."""
    keys = {}
    for table, rows in _doc_tables().items():
        if table == "kernel.<name>":
            for backend in KERNEL_BACKENDS:
                keys[f"kernel:{backend}"] = [
                    row["key"] for row in rows
                    if row["backend"] in ("all", backend) and row["key"] != "backend"
                ]
        else:
            keys[table] = [row["key"] for row in rows]
    return keys


DOC_KEYS = documented_keys()
SAMPLES = {
    "name": "relu", "version": 1, "edition": 5, "license": "Apache-2.0", "backends": ["cuda"],
    "upstream": "https://github.com/org/relu", "source": "git@github.com:org/relu.git",
    "kernel-depends": [{"repo-id": "org/dep", "version": 1}], "minver": "2.8", "maxver": "2.10",
    "repo-id": "org/relu", "branch": "main", "src": ["a.cpp"], "include": ["include"],
    "pyext": ["py", "json"], "cxx-flags": ["-O2"], "stable-abi": "2.10",
    "cuda_capabilities": ["8.0"], "rocm_archs": ["gfx90a"], "depends": ["torch"],
    "cuda-capabilities": ["8.0", "9.0a"], "cuda-flags": ["-lineinfo"], "cuda-minver": "12.4",
    "rocm-archs": ["gfx90a"], "hip-flags": ["-O2"], "sycl-flags": ["-O2"], "revision": "main",
}
PYTHON_DEPENDS = {"general": ["einops"], "general.cuda": ["nvidia-cutlass-dsl"],
                  "general.neuron": ["nki"], "general.xpu": ["onednn"], "general.tpu": []}


def _base() -> dict:
    general = {k: SAMPLES[k] for k in ("name", "version", "edition", "license", "backends")}
    return {"general": general, "torch": {"src": ["a.cpp"]}}


def build_file(table: str, key: str, value) -> dict:
    """A minimal valid edition-5 file with `key = value` written in `table`."""
    doc = _base()
    if table == DEPENDS_ENTRY:
        # `version` and `revision` exclude each other: pin with the one not under test.
        entry = {"repo-id": "org/dep"}
        if key not in ("version", "revision"):
            entry["version"] = 1
        entry[key] = value
        doc["general"]["kernel-depends"] = [entry]
    elif table.startswith("kernel:"):
        backend = table.split(":")[1]
        doc["kernel"] = {"k": {"backend": backend, "depends": [], "src": ["k.cpp"], key: value}}
    elif table in ("torch-noarch", "tvm-ffi"):
        del doc["torch"]
        doc[table] = {"src": ["a.cpp"]} if table == "tvm-ffi" else {}
        doc[table][key] = value
    else:
        node = doc
        for part in table.split("."):
            node = node.setdefault(part, {})
        node[key] = value
    return doc


def sample(table: str, key: str):
    if key == "python-depends":
        return PYTHON_DEPENDS[table]
    return SAMPLES[key]


def to_toml(doc: dict) -> str:
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"

    lines: list[str] = []

    def table(path: str, node: dict) -> None:
        if path:
            lines.append(f"[{path}]")
        lines.extend(f"{k} = {value(v)}" for k, v in node.items() if not isinstance(v, dict))
        lines.append("")
        for k, v in node.items():
            if isinstance(v, dict):
                table(f"{path}.{k}" if path else k, v)

    table("", doc)
    return "\n".join(lines)


def reference_open(text: str):
    """Runs the reference reader on `text`; returns None when it accepts it, else its error."""
    from kernels._rust import Build

    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "build.toml").write_text(text, encoding="utf-8")
        try:
            Build.open(directory)
        except ValueError as error:
            return str(error)
    return None


def reference_keys(table: str) -> set[str]:
    error = reference_open(to_toml(build_file(table, "zz-not-a-key", 1)))
    assert error is not None
    listed = re.search(r"Unknown field zz-not-a-key\. Expected one of (.*)", error)
    assert listed, error
    return {key.strip() for key in listed.group(1).split(",")}


def test_doc_covers_every_table():
    assert set(DOC_KEYS) == {
        "general", "general.cuda", "general.neuron", "general.xpu", "general.tpu",
        "general.hub", DEPENDS_ENTRY, "torch", "torch-noarch", "tvm-ffi",
        *(f"kernel:{backend}" for backend in KERNEL_BACKENDS),
    }


@pytest.mark.parametrize("table", sorted(DOC_KEYS))
def test_doc_keys_are_the_reference_keys(table):
    documented = set(DOC_KEYS[table])
    if table == "general":
        # The reference lists [general]'s sub-tables among its fields.
        documented |= {t.split(".")[1] for t in DOC_KEYS if t.startswith("general.")}
    assert documented == reference_keys(table), "docs/build-toml.md and the reference disagree"


@pytest.mark.parametrize("table,key", [(t, k) for t in sorted(DOC_KEYS) for k in DOC_KEYS[t]])
def test_documented_key_is_accepted_by_the_reference(table, key):
    assert reference_open(to_toml(build_file(table, key, sample(table, key)))) is None


FRAMEWORKS = ("torch", "torch-noarch", "tvm-ffi")


def doc_examples() -> list[dict]:
    """Every ```toml block of build-toml.md, completed into a whole file where it is a part."""
    import tomllib

    text = BUILD_TOML_MD.read_text(encoding="utf-8")
    examples = []
    for block in re.findall(r"```toml\n(.*?)```", text, flags=re.S):
        fragment = tomllib.loads(block)
        if "name" in fragment.get("general", {}) and any(f in fragment for f in FRAMEWORKS):
            examples.append(fragment)
            continue
        doc = _base()
        if any(name in fragment for name in FRAMEWORKS):
            del doc["torch"]
        # A bare key (a `kernel-depends = [...]` snippet) belongs in [general].
        loose = {k: v for k, v in fragment.items() if not isinstance(v, dict)}
        doc["general"].update(loose)
        _merge(doc, {k: v for k, v in fragment.items() if isinstance(v, dict)})
        examples.append(doc)
    return examples


def _merge(into: dict, extra: dict) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


EXAMPLES = doc_examples()


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_doc_example_is_accepted_by_the_reference(index):
    # Examples may name backends they have no [kernel.*] for; the reader does not mind.
    assert reference_open(to_toml(EXAMPLES[index])) is None


def _backticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _expected_values(error: str) -> set[str]:
    listed = re.search(r"Expected one of (.*)", error)
    assert listed, error
    return {value.strip() for value in listed.group(1).split(",")}


def test_doc_backends_are_the_reference_backends():
    text = BUILD_TOML_MD.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| backend | string |"))
    documented = set(_backticked(row.split("|")[3]))
    doc = build_file("general", "backends", ["not-a-backend"])
    assert documented == _expected_values(reference_open(to_toml(doc)))

    kernel_row = next(r for r in _doc_tables()["kernel.<name>"] if r["key"] == "backend")
    # "One of `cpu`, ... (`cann`, `neuron` and `tpu` kernels are noarch only.)"
    documented = set(_backticked(kernel_row["description"].split("(")[0]))
    doc = build_file("kernel:cuda", "backend", "not-a-backend")
    assert documented == set(KERNEL_BACKENDS) == _expected_values(reference_open(to_toml(doc)))


def test_doc_native_depends_are_the_reference_list():
    text = BUILD_TOML_MD.read_text(encoding="utf-8")
    section = text.split("## `depends`: native dependencies", 1)[1].split("\n## ", 1)[0]
    documented = {_backticked(line)[0] for line in section.splitlines() if line.startswith("| `")}
    doc = build_file("kernel:cuda", "depends", ["not-a-dependency"])
    assert documented == _expected_values(reference_open(to_toml(doc)))


def test_doc_python_depends_are_the_curated_data():
    text = BUILD_TOML_MD.read_text(encoding="utf-8")
    section = text.split("## `python-depends`: the curated list", 1)[1].split("\n## ", 1)[0]
    documented = set()
    for line in section.splitlines():
        if line.startswith("| `["):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            table, name, package = (_backticked(cell)[0] for cell in cells[:3])
            module = _backticked(cells[3])
            documented.add((table, name, package, module[0] if module else None))

    data = json.loads((REPO_ROOT / "data" / "python_dependencies.json").read_text())
    curated = set()
    for scope, names in [("general", data["general"]), *data["backends"].items()]:
        table = "[general]" if scope == "general" else f"[general.{scope}]"
        for name, packages in names.items():
            for package in packages:
                curated.add((table, name, package["package"], package["import"]))
    assert documented == curated


# --- docs/build-toml.md against our reader (`kernel-builder check-config`) ----------------------


def check_config(kernel_builder, text: str) -> dict:
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "build.toml").write_text(text, encoding="utf-8")
        result = run([kernel_builder, "check-config", "--json", directory])
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _errors(report: dict) -> list[str]:
    return [d["message"] for d in report["diagnostics"] if d["severity"] == "error"]


@pytest.mark.parametrize("table,key", [(t, k) for t in sorted(DOC_KEYS) for k in DOC_KEYS[t]])
def test_documented_key_is_accepted_by_check_config(kernel_builder, table, key):
    report = check_config(kernel_builder, to_toml(build_file(table, key, sample(table, key))))
    assert report["valid"], _errors(report)
    assert report["edition"] == 5


def _misspell(key: str) -> str:
    return key + "x"


@pytest.mark.parametrize("table,key", [(t, k) for t in sorted(DOC_KEYS) for k in DOC_KEYS[t]])
def test_misspelled_key_is_reported_by_check_config(kernel_builder, table, key):
    doc = build_file(table, key, sample(table, key))
    if table == DEPENDS_ENTRY:
        entry = doc["general"]["kernel-depends"][0]
    elif table.startswith("kernel:"):
        entry = doc["kernel"]["k"]
    elif table in FRAMEWORKS:
        entry = doc[table]
    else:
        entry = doc
        for part in table.split("."):
            entry = entry[part]
    entry[_misspell(key)] = entry.pop(key)
    report = check_config(kernel_builder, to_toml(doc))
    unknown = [d for d in report["diagnostics"]
               if d["severity"] == "error" and f'unknown key "{_misspell(key)}"' in d["message"]]
    assert unknown, report["diagnostics"]
    # Without `edition` the file reads as a legacy edition, which has no `edition` key to
    # suggest; the typo is still reported.
    if key != "edition":
        assert unknown[0].get("hint") == f'did you mean "{key}"?'


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_doc_example_is_accepted_by_check_config(kernel_builder, index):
    report = check_config(kernel_builder, to_toml(EXAMPLES[index]))
    assert report["valid"], _errors(report)


# The deliberate differences the docs promise ("Differences from the reference kernel-builder").


def test_difference_noarch_accepts_kebab_case_archs(kernel_builder):
    doc = _base()
    del doc["torch"]
    doc["torch-noarch"] = {"cuda-capabilities": ["8.0"], "rocm-archs": ["gfx90a"]}
    text = to_toml(doc)
    assert "Unknown field cuda-capabilities" in reference_open(text)
    assert check_config(kernel_builder, text)["valid"]


def test_difference_edition3_is_read_with_an_upgrade_warning(kernel_builder):
    # Edition 3: no `edition`, no `license` or `version`, no framework table (so noarch).
    text = '[general]\nname = "relu"\nbackends = ["cuda"]\n'
    assert reference_open(text) is not None
    report = check_config(kernel_builder, text)
    assert report["valid"], _errors(report)
    assert report["edition"] == 3
    warnings = [d["message"] + d.get("hint", "") for d in report["diagnostics"]
                if d["severity"] == "warning"]
    assert any("update-build" in warning for warning in warnings), report["diagnostics"]


def test_difference_python_depends_are_checked_when_read(kernel_builder):
    text = to_toml(build_file("general", "python-depends", ["not-curated"]))
    assert reference_open(text) is None
    report = check_config(kernel_builder, text)
    assert not report["valid"]
    assert any("not-curated" in message for message in _errors(report))
