"""The suites' headlines as declarations (:mod:`faithprobe.metrics.headline`) read the same
effects as the hand-written functions they replaced.

``data/card_headlines.json.gz`` holds step metrics.json files of every built-in suite
written before the declarations (an audit of ref:reader, ref:constant and ref:nearest at
the small budget, one of the embedded model, right-reasons with saliency, and a scale run
of the predicate-argument probe), trimmed to the lists a headline reads and without the
per-unit numbers, beside the effect and competence records the old functions read off
them: every text, interval, region and verdict must come out the same."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from faithprobe.audit.card_metrics import headline
from faithprobe.metrics.headline import EffectSpec, Headline

CASES = json.loads(
    gzip.decompress((Path(__file__).parent / "data" / "card_headlines.json.gz").read_bytes())
)


def _reworded(record: dict) -> dict:
    """A recorded competence record in today's words: since the competence test binds on
    every constant answer (the largest p-value over them, faithprobe.metrics.competence),
    a not-assessable reason names "the constant answer" and says whose p it is."""
    if "reason" not in record:
        return record
    reason = record["reason"].replace("the best constant answer", "the constant answer")
    reason = re.sub(r"\(one-sided p = ([^)]*)\)",
                    r"(one-sided p = \1, the largest over the constant answers)", reason)  # fmt: skip
    return {**record, "reason": reason}


@pytest.mark.parametrize("case", CASES, ids=[c["source"] for c in CASES])
def test_the_declared_headline_reads_what_the_old_functions_read(case):
    effects, competence = headline(case["metrics"]["suite"], case["metrics"])
    assert [e.record() for e in effects] == case["effects"]
    assert [c.record() for c in competence] == [_reworded(r) for r in case["competence"]]


def test_the_cases_cover_every_suite_and_verdict():
    suites = {c["metrics"]["suite"] for c in CASES}
    assert suites == {"distractors", "faithfulness", "natural-logic", "right-reasons",
                      "confidence-shift"}  # fmt: skip
    verdicts = {e["verdict"] for c in CASES for e in c["effects"]}
    assert verdicts == {"faithful", "unfaithful", "inconclusive"}
    assert any(not r["competent"] for c in CASES for r in c["competence"])


ROWS = {
    "scores": [
        {"subject": "a", "method": "x", "value": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 9},
        {"subject": "a", "method": "y", "value": 0.9, "ci_low": 0.8, "ci_high": 1.0, "n": 9},
        {"subject": "b", "method": "y", "value": 0.5, "ci_low": None, "ci_high": None, "n": 0,
         "n_clusters": 4},
    ]
}  # fmt: skip


def _spec(**changes) -> EffectSpec:
    given = {"side": "at_least", "key": "k_{method}", "title": "t {label}",
             "reading": "{value:.1f}", "n": ("n",)}  # fmt: skip
    return EffectSpec("scores", "toy.edge", **{**given, **changes})


def _read(*specs: EffectSpec, rows=ROWS) -> list:
    return Headline("toy", {"toy.edge": (0.5, "why")}, specs)(rows)


def test_rows_give_their_effects_in_declared_order_and_texts_are_templates():
    labels = _spec(fields=lambda r: {"label": r["method"].upper()})
    first, second = labels, _spec(key="second_{method}", side="at_most", fields=labels.fields)
    found = _read(first, second)
    assert [(e.key, e.subject) for e in found] == [
        ("k_x", "a"), ("second_x", "a"), ("k_y", "a"), ("second_y", "a"), ("k_y", "b"),
        ("second_y", "b")]  # fmt: skip
    assert found[0].title == "t X" and found[0].reading == "0.2"
    assert found[0].region.bound == 0.5 and found[0].edge == "toy.edge"
    assert [e.verdict for e in found[:2]] == ["unfaithful", "faithful"]


def test_match_prefer_and_units_select_rows_and_count():
    only_y = _spec(match={"method": ("y",)}, fields=lambda r: {"label": ""}, n=("n_clusters", "n"))
    assert [(e.subject, e.n) for e in _read(only_y)] == [("a", 9), ("b", 4)]
    preferred = _spec(prefer=("method", "y"), fields=lambda r: {"label": ""})
    assert [e.key for e in _read(preferred)] == ["k_y", "k_y"]
    absent = _spec(prefer=("method", "z"), fields=lambda r: {"label": ""})
    assert [e.key for e in _read(absent)] == ["k_x"]  # none has z: the first method's rows
    flat = {"scores": [{"subject": "a", "method": "x", "d": 0.7, "d_low": 0.6, "d_high": 0.8,
                        "n": 3}]}  # fmt: skip
    regrouped = _spec(estimate={"value": "d", "ci_low": "d_low", "ci_high": "d_high"},
                      reading="{d}", fields=lambda r: {"label": ""})  # fmt: skip
    (effect,) = _read(regrouped, rows=flat)
    assert (effect.value, effect.ci_low, effect.ci_high, effect.n) == (0.7, 0.6, 0.8, 3)
