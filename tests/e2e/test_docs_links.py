# SPDX-License-Identifier: Apache-2.0
"""The docs an author starts from hold together (issue 22 §9): every relative link of README.md
and docs/*.md names a file (and heading) that exists, docs/README.md indexes every page, and
the variant names the pages pass to `--variant` are names a build really produces."""
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, REPO_ROOT, run

DOCS = REPO_ROOT / "docs"
PAGES = [REPO_ROOT / "README.md", *sorted(DOCS.glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str):
    """(line number, line) outside fenced code blocks and inline code spans."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", "", line)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lowercased, punctuation other than `-`
    and `_` removed, spaces turned into `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[`*]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors, seen = set(), {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            slug = _slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    for explicit in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", page.read_text(encoding="utf-8")):
        anchors.add(explicit)
    return anchors


def _links(page: Path):
    for number, line in _prose_lines(page.read_text(encoding="utf-8")):
        for pattern in (_LINK, _IMAGE, _REFERENCE):
            for target in pattern.findall(line):
                yield number, target


def _broken(page: Path) -> list[str]:
    problems = []
    for number, target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # http:, https:, mailto: ...: not ours to check offline
        path_part, _, anchor = target.partition("#")
        file = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(REPO_ROOT)}:{number}: {target}"
        if not file.exists():
            problems.append(f"{where}: no file {file.relative_to(REPO_ROOT) if file.is_relative_to(REPO_ROOT) else file}")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            problems.append(f"{where}: no heading with anchor #{anchor} in {file.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_relative_links_name_existing_files_and_headings(page):
    problems = _broken(page)
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_link_checker_sees_a_broken_link(tmp_path):
    # The checker itself: a missing file and a missing heading are both reported.
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    page.write_text("[ok](there.md#a-heading) [gone](missing.md) [bad](there.md#nope)\n"
                    "```\n[in code](ignored.md)\n```\n")
    problems = [p.split(": ", 1)[1] for p in _broken_outside_repo(page)]
    assert problems == ["missing.md", "there.md#nope"]


def _broken_outside_repo(page: Path) -> list[str]:
    problems = []
    for number, target in _links(page):
        path_part, _, anchor = target.partition("#")
        file = page.parent / path_part
        if not file.exists() or (anchor and anchor not in _anchors(file)):
            problems.append(f"{number}: {target}")
    return problems


def test_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for _, target in _links(DOCS / "README.md")}
    missing = [page.name for page in sorted(DOCS.glob("*.md"))
               if page.name != "README.md" and page.name not in linked]
    assert not missing, f"docs/README.md does not index: {', '.join(missing)}\n{index[:200]}"


def test_variant_names_in_examples_are_real(kernel_builder):
    # signing.md's `--variant` example is run against examples/relu: the name must be one of
    # the variants that kernel yields (the compliance matrix on every system, or this one).
    real = set()
    for extra in (["--all"], []):
        listed = run([kernel_builder, "list-variants", *extra, EXAMPLES / "relu"], check=True)
        real |= set(listed.stdout.split())
    used = []
    for page in PAGES:
        for name in re.findall(r"--variant[ =]([A-Za-z0-9_.-]+)", page.read_text(encoding="utf-8")):
            if name.upper() != name:  # placeholders such as VARIANT are not names
                used.append((page.name, name))
    assert used, "no --variant example found: the check would pass vacuously"
    # A short form (`--variant cpu`, `cu128`, `torch211-cpu`) names the variants whose
    # dash-separated parts include each of its parts ("cuda" standing for any cuNNN), as
    # `--variant` matches them (builder/variant_selection): it must name at least one.
    def part_matches(wanted, part):
        return wanted == part or (wanted in ("cuda", "rocm", "xpu", "cann") and re.fullmatch(
            ("cu" if wanted == "cuda" else wanted) + r"\d+", part) is not None)

    def names_a_variant(name):
        wanted = name.lower().split("-")
        return name in real or any(
            all(any(part_matches(w, part) for part in variant.lower().split("-")) for w in wanted)
            for variant in real)

    wrong = [f"{page}: {name}" for page, name in used if not names_a_variant(name)]
    assert not wrong, f"--variant names no build of examples/relu yields: {wrong}"
