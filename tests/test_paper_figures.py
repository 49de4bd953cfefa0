"""The papers' figures that the suite pages set beside ours are the papers' own: every number
in a reproduction table's ``paper`` column is in the shared file of the method's published
figures (``../shared/papers/<suite>.md``), in the section and row it names.

A reproduction table follows a marker ``<!-- paper: FILE | SECTION -->`` (SECTION: the start
of a ``##`` heading of FILE); its ``paper`` column is headed ``paper`` or ``paper: what it
holds``. With a ``paper row`` column, whose cell is the row's leading
cells joined by `` / ``, each number of the ``paper`` cell must be a cell of that row;
without one, each must occur in the section's text. Skipped where the shared folder is
absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "suites"
PAPERS = ROOT.parent / "shared" / "papers"
MARKER = re.compile(r"<!-- paper: (?P<file>[\w.-]+) \| (?P<section>[^>]+?) -->")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
SUITES = ("confidence-shift", "distractors", "faithfulness", "natural-logic", "right-reasons")

pytestmark = pytest.mark.skipif(not PAPERS.is_dir(), reason="no ../shared/papers here")


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` as written, thousands separators dropped (1,473 -> 1473)."""
    return [n.replace(",", "") for n in NUMBER.findall(text)]


def table_after(lines: list[str], start: int) -> list[list[str]]:
    """The Markdown table that begins at or after ``lines[start]``: its rows of cells,
    the header first, the separator left out."""
    i = start
    while i < len(lines) and not lines[i].startswith("|"):
        i += 1
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if not all(set(c) <= set("-: ") for c in cells):
            rows.append(cells)
        i += 1
    return rows


def section(text: str, heading: str) -> str:
    """The text under the ``##`` heading that starts with ``heading``."""
    parts = re.split(r"^## ", text, flags=re.M)
    found = [p for p in parts[1:] if p.startswith(heading)]
    assert len(found) == 1, f"no single section {heading!r}"
    return found[0]


def reproduction_tables():
    """(page, file, section, header, row) for every row of every marked table."""
    for page in sorted(DOCS.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if match := MARKER.search(line):
                header, *rows = table_after(lines, i + 1)
                for row in rows:
                    yield page.name, match["file"], match["section"].strip(), header, row


ROWS = list(reproduction_tables())


def test_every_seed_method_page_sets_its_paper_beside_ours():
    marked = {page for page, *_ in ROWS}
    assert {f"{suite}.md" for suite in SUITES} <= marked
    assert {file for _, file, *_ in ROWS} == {f"{suite}.md" for suite in SUITES}
    reasoning = (DOCS / "reasoning.md").read_text(encoding="utf-8")
    assert "not in the shared folder" in reasoning  # its papers' figures are not at hand


@pytest.mark.parametrize(("page", "file", "heading", "header", "row"), ROWS)
def test_the_paper_column_holds_the_papers_figures(page, file, heading, header, row):
    paper = [h for h in header if h == "paper" or h.startswith("paper:")]
    assert len(paper) == 1, f"{page}: a reproduction table needs one 'paper' column"
    cells = dict(zip(header, row, strict=True))
    cells["paper"] = cells[paper[0]]
    text = section((PAPERS / file).read_text(encoding="utf-8"), heading)
    claimed = numbers(cells["paper"])
    if "paper row" in cells:
        keys = [k.strip() for k in cells["paper row"].split(" / ")]
        lines = text.splitlines()
        table = table_after(lines, 0)
        matches = [r for r in table[1:] if r[: len(keys)] == keys]
        assert len(matches) == 1, f"{page}: no row {keys} in {file} {heading}"
        allowed = {n for cell in matches[0] for n in numbers(cell)}
    else:
        allowed = set(numbers(text))
    missing = [n for n in claimed if n not in allowed]
    assert not missing, f"{page}: {missing} are not the paper's ({file}, {heading})"
