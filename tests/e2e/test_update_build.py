# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder update-build` against the reference.

Cases: the corpus's v4 files, v4 files derived from the corpus's edition-5 files (the
`edition` line removed; kept only when the reference itself reads the result as v4) and v3
files derived from those (the reference must call them "unsupported legacy format").

The reference's update-build (Rust) is not installed; what is, `kernels._rust.Build.open`,
parses build.toml with the reference's strict serde schema and upgrades v4 in memory. So:
- our output must open with it as edition 5 (no legacy warning), which proves every key we
  wrote is one the reference's edition 5 accepts;
- the build it describes must equal the reference's in-memory upgrade of the original
  (the parts the binding exposes: backends and kernel dependencies), and
- its parsed structure must equal the structure the reference's upgrade would serialise,
  modelled from kernels-data's compat rules (v4: + edition; v3: version defaults to 1, no
  framework becomes an empty [torch-noarch], a missing license is an error);
- every comment line of the input must survive.
"""
import copy
import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from conftest import CORPUS_DIR, run

LEGACY_V4 = "uses the legacy v4 format"
LEGACY_V3 = "unsupported legacy format"

def reference_open(kernel_dir, capfd):
    """(build facts or None, stderr) as the reference's Build.open sees `kernel_dir`. The
    reference prints its legacy warnings to file descriptor 2, hence capfd."""
    from kernels._rust import Backend, Build

    capfd.readouterr()
    try:
        build = Build.open(str(kernel_dir))
    except ValueError as error:
        return None, capfd.readouterr().err + str(error)
    facts = {"backends": [str(backend) for backend in build.general.backends], "depends": {}}
    for name in ["cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu"]:
        depends = build.all_kernel_depends(Backend.from_str(name))
        facts["depends"][name] = sorted(repr(dependency) for dependency in depends)
    return facts, capfd.readouterr().err


def comment_lines(text):
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def remove_line(text, pattern):
    """`text` without the first line matching `pattern` (a regex), or None when none does."""
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if re.match(pattern, line):
            return "".join(lines[:index] + lines[index + 1:])
    return None


def remove_table(text, header):
    """`text` without the section under `[header]` (up to the next header), or None."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == f"[{header}]"]
    if not starts:
        return None
    end = next((i for i in range(starts[0] + 1, len(lines)) if lines[i].lstrip().startswith("[")),
               len(lines))
    if any(line.strip().startswith(f"[{header}.") for line in lines[end:]):
        return None  # sub-tables would keep the table alive
    return "".join(lines[:starts[0]] + lines[end:])


def normalise(data):
    """Serde's defaults applied, so "absent" and "default" compare equal."""
    data = copy.deepcopy(data)
    if "torch" in data:
        data["torch"].setdefault("src", [])
    data.setdefault("kernel", {})
    return data


def reference_upgrade(data, edition):
    """The structure kernels-data's update-build writes for `data` (compat.rs, v3.rs, v4.rs)."""
    data = copy.deepcopy(data)
    general = data["general"]
    if edition == 3:
        general.setdefault("version", 1)
        if not any(key in data for key in ("torch", "tvm-ffi")):
            data["torch-noarch"] = {}
    general["edition"] = 5
    return normalise(data)


def uses_v4_only_keys(text):
    """Keys v3 lacks. The reference's v3 reader drops a framework it cannot read (a flattened
    `Option` swallows the error) instead of failing, so such files are no v3 test cases."""
    data = tomllib.loads(text)
    return ("torch-noarch" in data or "source" in data["general"]
            or any(key in data.get("torch", {}) for key in ("stable-abi", "cxx-flags"))
            or "cxx-flags" in data.get("tvm-ffi", {}))


def build_cases():
    cases = []
    for path in sorted(CORPUS_DIR.glob("*.toml")):
        text = path.read_text()
        if re.search(r"(?m)^edition\s*=", text):
            derived = remove_line(text, r"^edition\s*=\s*5\s*$")
            cases.append((f"{path.stem}-as-v4", derived, 4))
        else:
            cases.append((path.stem, text, 4))
    v3_cases = []
    for name, text, _ in cases:
        if uses_v4_only_keys(text) or "kernel-depends" in text or "[general.tpu]" in text:
            continue
        v3_cases.append((f"{name}-no-version", remove_line(text, r"^version\s*="), 3))
        v3_cases.append((f"{name}-no-framework", remove_table(text, "torch"), 3))
    return cases + [case for case in v3_cases if case[1] is not None]


CASES = build_cases()


def write_kernel(tmp_path, text):
    kernel_dir = tmp_path / "kernel"
    kernel_dir.mkdir()
    (kernel_dir / "build.toml").write_text(text)
    return kernel_dir


@pytest.mark.parametrize("name,text,edition", CASES, ids=[case[0] for case in CASES])
def test_upgrade_matches_reference(kernel_builder, tmp_path, capfd, name, text, edition):
    kernel_dir = write_kernel(tmp_path, text)
    original_facts, original_stderr = reference_open(kernel_dir, capfd)
    if edition == 4:
        if original_facts is None:
            pytest.skip(f"the reference does not read {name} as v4: {original_stderr[-200:]}")
        assert LEGACY_V4 in original_stderr
    else:
        if LEGACY_V3 not in original_stderr:
            pytest.skip(f"the reference does not see {name} as v3: {original_stderr[-200:]}")

    result = run([kernel_builder, "update-build", kernel_dir], check=True)
    assert result.stdout.strip() == f"upgraded build.toml from edition {edition} to 5"
    upgraded = (kernel_dir / "build.toml").read_text()

    upgraded_facts, upgraded_stderr = reference_open(kernel_dir, capfd)
    assert upgraded_facts is not None, upgraded_stderr
    assert "legacy" not in upgraded_stderr
    if original_facts is not None:
        assert upgraded_facts == original_facts

    assert normalise(tomllib.loads(upgraded)) == reference_upgrade(tomllib.loads(text), edition)
    surviving = comment_lines(upgraded)
    for comment in comment_lines(text):
        assert comment in surviving
    # Nothing but the new lines changed: every input line is still there, in order.
    remaining = iter(upgraded.splitlines())
    for line in text.splitlines():
        assert any(candidate == line for candidate in remaining), line

    again = run([kernel_builder, "update-build", kernel_dir], check=True)
    assert again.stdout.strip() == "build.toml is already edition 5"
    assert (kernel_dir / "build.toml").read_text() == upgraded


def test_case_list_covers_the_corpus():
    editions = [edition for _, _, edition in CASES]
    assert editions.count(4) >= 20
    assert editions.count(3) >= 15


def test_v3_without_license_is_refused_and_left_untouched(kernel_builder, tmp_path, capfd):
    text = remove_line((CORPUS_DIR / "relu-archs-subset.toml").read_text(), r"^license\s*=")
    kernel_dir = write_kernel(tmp_path, text)
    _, reference_stderr = reference_open(kernel_dir, capfd)
    assert LEGACY_V3 in reference_stderr
    result = run([kernel_builder, "update-build", kernel_dir])
    assert result.returncode == 1
    assert "the `license` key is required in the `general` section" in result.stderr
    assert "build.toml:1:1" in result.stderr
    assert (kernel_dir / "build.toml").read_text() == text


def test_dry_run_prints_a_diff_and_writes_nothing(kernel_builder, tmp_path):
    text = (CORPUS_DIR / "relu-archs-subset.toml").read_text()
    kernel_dir = write_kernel(tmp_path, text)
    result = run([kernel_builder, "update-build", kernel_dir, "--dry-run"], check=True)
    assert result.stdout.startswith("--- a/build.toml\n+++ b/build.toml\n@@ -1,6 +1,7 @@\n")
    assert "\n+edition = 5\n" in result.stdout
    assert sum(line.startswith(("+", "-")) for line in result.stdout.splitlines()) == 3
    assert (kernel_dir / "build.toml").read_text() == text


def test_json_report(kernel_builder, tmp_path):
    text = (CORPUS_DIR / "relu-archs-subset.toml").read_text()
    kernel_dir = write_kernel(tmp_path, text)
    dry = json.loads(run([kernel_builder, "update-build", kernel_dir, "--dry-run", "--json"],
                         check=True).stdout)
    assert dry["source_edition"] == 4 and dry["edition"] == 5
    assert dry["changed"] is True and dry["updated"] is False
    assert dry["method"] == "edited"
    assert "edition = 5" in dry["text"] and "+edition = 5" in dry["diff"]
    update = [kernel_builder, "update-build", kernel_dir, "--json"]
    done = json.loads(run(update, check=True).stdout)
    assert done["updated"] is True and "text" not in done
    assert (kernel_dir / "build.toml").read_text() == dry["text"]
    again = json.loads(run(update, check=True).stdout)
    assert again["changed"] is False and again["source_edition"] == 5


def test_errors_leave_the_file_untouched(kernel_builder, tmp_path):
    text = ("[general]\nname = \"relu\"\nversion = 1\nlicense = \"MIT\"\n"
            "backends = [\"cudaa\"]\n[torch]\n")
    kernel_dir = write_kernel(tmp_path, text)
    result = run([kernel_builder, "update-build", kernel_dir])
    assert result.returncode == 1
    assert "build.toml:5:" in result.stderr
    assert "kernel-builder: error: cannot update build configuration" in result.stderr
    assert (kernel_dir / "build.toml").read_text() == text
    report = json.loads(run([kernel_builder, "update-build", kernel_dir, "--json"]).stdout)
    assert report["updated"] is False
    assert any(d["severity"] == "error" and d["line"] == 5 for d in report["diagnostics"])


def test_not_a_directory(kernel_builder, tmp_path):
    result = run([kernel_builder, "update-build", tmp_path / "missing"])
    assert result.returncode == 1
    assert "is not a directory" in result.stderr


def test_license_option_completes_a_file_without_license(kernel_builder, tmp_path, capfd):
    text = remove_line((CORPUS_DIR / "relu-archs-subset.toml").read_text(), r"^license\s*=")
    kernel_dir = write_kernel(tmp_path, text)
    result = run([kernel_builder, "update-build", kernel_dir, "--license", "BSD-3-Clause"],
                 check=True)
    assert result.stdout.strip() == "upgraded build.toml from edition 3 to 5"
    upgraded = (kernel_dir / "build.toml").read_text()
    facts, stderr = reference_open(kernel_dir, capfd)
    assert facts is not None and "legacy" not in stderr, stderr
    expected = reference_upgrade(tomllib.loads(text), 3)
    expected["general"]["license"] = "BSD-3-Clause"
    assert normalise(tomllib.loads(upgraded)) == expected


def test_historic_edition_is_upgraded_in_place(kernel_builder, tmp_path, capfd):
    text = ("# v1\n[general]\nname = \"act\"\n\n[torch]\nsrc = [\"b.cpp\"]\n\n"
            "[kernel.act]\nlanguage = \"cuda-hipify\"  # and ROCm\ndepends = [\"torch\"]\n"
            "src = [\"act.cu\"]\n")
    kernel_dir = write_kernel(tmp_path, text)
    result = run([kernel_builder, "update-build", kernel_dir, "--license", "MIT"], check=True)
    assert result.stdout.strip() == "upgraded build.toml from edition 1 to 5"
    assert result.stderr == ""
    upgraded = (kernel_dir / "build.toml").read_text()
    assert "# v1\n" in upgraded and "backend = \"cuda\"  # and ROCm\n" in upgraded
    facts, stderr = reference_open(kernel_dir, capfd)
    assert facts is not None and "legacy" not in stderr, stderr
    assert facts["backends"] == ["cuda", "rocm"]


# Without `edition`, a [torch.stable-abi] table fits no legacy edition: see the test below.
DIFF_CASES = [case for case in CASES if "[torch.stable-abi]" not in case[1]]


@pytest.mark.skipif(shutil.which("diff") is None, reason="diff(1) is not installed")
@pytest.mark.parametrize("name,text,edition", DIFF_CASES, ids=[case[0] for case in DIFF_CASES])
def test_dry_run_diff_matches_diff_u(kernel_builder, tmp_path, name, text, edition):
    kernel_dir = write_kernel(tmp_path, text)
    ours = run([kernel_builder, "update-build", kernel_dir, "--dry-run"], check=True).stdout
    report = run([kernel_builder, "update-build", kernel_dir, "--dry-run", "--json"], check=True)
    (tmp_path / "new.toml").write_text(json.loads(report.stdout)["text"])
    expected = run(["diff", "-u", kernel_dir / "build.toml", tmp_path / "new.toml"]).stdout
    assert ours.splitlines()[2:] == expected.splitlines()[2:]


def test_edition5_keys_without_edition_are_refused(kernel_builder, tmp_path, capfd):
    """The reference reads this file as v3 because its v3 schema flattens an optional
    framework, which swallows the error, so its update-build would write [torch-noarch] and
    silently drop [torch]. We refuse the file and point at the missing `edition` instead."""
    text = remove_line((CORPUS_DIR / "relu-torch-stable-abi.toml").read_text(), r"^edition\s*=")
    kernel_dir = write_kernel(tmp_path, text)
    _, reference_stderr = reference_open(kernel_dir, capfd)
    assert LEGACY_V3 in reference_stderr
    result = run([kernel_builder, "update-build", kernel_dir])
    assert result.returncode == 1
    assert "edition = 5" in result.stderr  # the hint names the missing key
    assert (kernel_dir / "build.toml").read_text() == text


@pytest.mark.parametrize("path", sorted(CORPUS_DIR.glob("*.toml")), ids=lambda path: path.stem)
def test_edition5_files_are_left_alone(kernel_builder, tmp_path, path):
    text = path.read_text()
    if "edition = 5" not in text:
        pytest.skip("not an edition-5 file")
    kernel_dir = write_kernel(tmp_path, text)
    result = run([kernel_builder, "update-build", kernel_dir], check=True)
    assert result.stdout == "build.toml is already edition 5\n"
    assert (kernel_dir / "build.toml").read_text() == text


CANONICAL_CASES = [(path.stem, path.read_text(), 5) for path in sorted(CORPUS_DIR.glob("*.toml"))
                   if "edition = 5" in path.read_text()] + DIFF_CASES


@pytest.mark.parametrize("name,text,edition", CANONICAL_CASES,
                         ids=[f"canonical-{case[0]}" for case in CANONICAL_CASES])
def test_canonical_layout_matches_reference(kernel_builder, tmp_path, capfd, name, text, edition):
    """--canonical re-serialises with the writer: a differential test of build_toml_writer."""
    kernel_dir = write_kernel(tmp_path, text)
    original_facts, _ = reference_open(kernel_dir, capfd)
    report = json.loads(run([kernel_builder, "update-build", kernel_dir, "--canonical", "--dry-run",
                             "--json"], check=True).stdout)
    assert report["method"] in ("rewritten", "unchanged")
    (kernel_dir / "build.toml").write_text(report["text"])
    facts, stderr = reference_open(kernel_dir, capfd)
    assert facts is not None and "legacy" not in stderr, stderr
    if original_facts is not None:
        assert facts == original_facts
    expected = normalise(tomllib.loads(text)) if edition == 5 else reference_upgrade(
        tomllib.loads(text), edition)
    assert normalise(tomllib.loads(report["text"])) == expected
    again = run([kernel_builder, "update-build", kernel_dir, "--canonical"], check=True)
    assert again.stdout == "build.toml is already edition 5\n"
