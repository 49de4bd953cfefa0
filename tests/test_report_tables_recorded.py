"""The report tables and the card rebuilt from recorded metrics are byte for byte what the
code wrote before the tables were declared as data (faithprobe.report.table_spec).

``data/report_tables.json.gz`` holds the metrics.json of run folders of every built-in
suite, written by that code (an audit of ref:reader, ref:constant and ref:nearest at the
small budget; the predicate-argument probe; deletion on the HotpotQA sample; the reasoning
references on the shipped BBH sample; confidence-shift answered by letter; right-reasons
with saliency; natural-logic with its challenge sets), without the per-unit numbers no
table shows, beside the ``tables/`` files it wrote from them (each Markdown face whole,
each CSV by its SHA-256), and the audit's metrics.json and run.json beside its card.md."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from faithprobe.audit.card_markdown import render_markdown
from faithprobe.audit.card_page import card_view
from faithprobe.report.build import _view
from faithprobe.report.tables import write_tables

CASES = json.loads(
    gzip.decompress((Path(__file__).parent / "data" / "report_tables.json.gz").read_bytes())
)


def _recorded(path: Path) -> str:
    """A written table file as the fixture holds it (a CSV by its hash)."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


RUNS = [c for c in CASES if c["kind"] == "run"]


@pytest.mark.parametrize("case", RUNS, ids=[c["source"] for c in RUNS])
def test_a_rebuilt_run_writes_the_recorded_tables(case, tmp_path):
    metrics = case["metrics"]
    write_tables(_view(metrics).tables(metrics), tmp_path)
    written = {p.name: _recorded(p) for p in sorted(tmp_path.iterdir())}
    assert list(written) == list(case["files"])
    for name, text in case["files"].items():
        assert written[name] == text, name


CARDS = [c for c in CASES if c["kind"] == "card"]


@pytest.mark.parametrize("case", CARDS, ids=[c["source"] for c in CARDS])
def test_a_rebuilt_card_is_the_recorded_one(case):
    assert render_markdown(card_view(case["metrics"], case["run"])) == case["files"]["card.md"]


def test_the_cases_cover_every_built_in_suite():
    suites = {c["metrics"]["suite"] for c in RUNS}
    assert suites == {"confidence-shift", "distractors", "faithfulness", "natural-logic",
                      "reasoning", "right-reasons"}  # fmt: skip
