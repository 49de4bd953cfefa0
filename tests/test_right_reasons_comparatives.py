"""Exact match per comparative in the right-reasons suite: a model that follows "older" and
"younger" but keeps its answer for every other comparative shows it in the per-comparative
records and table, and nowhere else."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from faithprobe.requests import SpanAnswer
from faithprobe.runner import result_rows
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.right_reasons.metrics import right_reasons_metrics
from faithprobe.suites.right_reasons.report import COMPARATIVES

READ = ("older", "younger")  # the comparatives the planted model reads


def _span(text: str, context: str) -> SpanAnswer:
    start = context.find(text)
    return SpanAnswer(text, start, start + len(text), 1.0, 0.0)


@pytest.fixture(scope="module")
def results():
    suite = get_suite("right-reasons", {"saliency": ""})
    pairs = suite.sample(suite.pairs(None, 0), 60, 0)
    answers = {}
    for p in pairs:
        o, x = p.original, p.intervened
        answers[o.id] = _span(o.answers[0], o.context)
        if not p.dropped:
            reads = x.features["original_comparative"] in READ
            answers[x.id] = _span((x if reads else o).answers[0], x.context)
    subject = SimpleNamespace(name="reads-age", fingerprint="f", accepts={"span-answer"})
    return suite, pd.DataFrame(result_rows(suite, pairs, subject, answers))


def test_each_row_names_the_comparative_and_its_replacement(results):
    _, rows = results
    answered = rows[rows["dropped_reason"].isna()]
    assert answered["og_comparative"].notna().all() and answered["cf_comparative"].notna().all()
    cf = answered[answered["variant"] == "CF"]
    swaps = set(zip(cf["og_comparative"], cf["cf_comparative"], strict=True))
    assert ("older", "younger") in swaps and ("earlier", "later") in swaps
    for asked, said in (("question", "og_comparative"), ("cf_question", "cf_comparative")):
        assert all(c in q.lower() for q, c in zip(cf[asked], cf[said], strict=True))


def test_exact_match_per_comparative(results):
    suite, rows = results
    metrics = suite.metrics(rows, 0)
    records = metrics["comparatives"]
    assert records and {r["metric"] for r in records} == {"em", "f1"}
    cell = ("dataset", "variant", "comparative", "antonym")
    by = {(*(r[k] for k in cell), r["metric"], r["side"]): r for r in records}
    cells = {k[:4] for k in by}
    for dataset, variant, comparative, antonym in cells:
        og, cf = (by[(dataset, variant, comparative, antonym, "em", s)] for s in ("og", "cf"))
        assert og["value"] == 1.0
        assert cf["value"] == (1.0 if comparative in READ else 0.0), (comparative, antonym)
        assert og["n"] == cf["n"] > 0
    # the cells partition the answered pairs of each variant
    scores = {(r["dataset"], r["variant"], r["metric"], r["side"]): r for r in metrics["scores"]}
    for dataset, variant, _, _ in scores:
        n = sum(by[(*c, "em", "og")]["n"] for c in cells if c[:2] == (dataset, variant))
        assert n == scores[(dataset, variant, "em", "og")]["n"]
    # the overall cf EM hides what the cells show: neither 0 nor 1
    assert all(0 < r["value"] < 1 for k, r in scores.items() if k[1:] == ("CF", "em", "cf"))


def test_the_report_table_shows_em_per_comparative(results):
    suite, rows = results
    table = COMPARATIVES(suite.metrics(rows, 0))
    shown = table.display
    assert {"comparative", "antonym", "og EM", "cf EM", "og F1", "cf F1"} <= set(shown.columns)
    older = shown[(shown["variant"] == "CF") & (shown["comparative"] == "older")]
    assert older["cf EM"].str.startswith("100").all()


def test_tables_without_comparisons_or_the_columns_have_no_records():
    row = {"subject": "s", "dataset": "coreference", "variant": "CF", "pair_id": "p",
           "original_id": "o", "passage_id": "x", "dropped_reason": None,
           "og_answers": ["Ann"], "og_em": 1.0, "cf_em": 0.0, "og_f1": 1.0, "cf_f1": 0.0,
           "same_answer": True}  # fmt: skip
    coreference = pd.DataFrame([{**row, "og_comparative": None, "cf_comparative": None}])
    assert right_reasons_metrics(coreference, (), seed=0)["comparatives"] == []
    assert right_reasons_metrics(pd.DataFrame([row]), (), seed=0)["comparatives"] == []
    assert COMPARATIVES({"comparatives": []}) is None
