"""The distractors suite's card: competence against the best constant answer, the accuracy
lost to one related attractor after the fact and its unrelated control, on the audit's
small sample, answered by planted answerers (no model)."""

from __future__ import annotations

import math
import re
import zlib

import pandas as pd
import pytest

from faithprobe.audit.plan import STEPS
from faithprobe.datasets.stories import ITEM_SETS
from faithprobe.metrics.verdict import (
    FAITHFUL,
    NOT_ASSESSABLE,
    UNFAITHFUL,
    Competence,
    Effect,
    combined,
)
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.distractors import metrics as m
from faithprobe.suites.distractors.headline import EDGES, headline
from planted_cloze import planted_results

SMALL = STEPS[0].limits["small"]


def reader(item):
    """Uses the critical fact: always the target."""
    return item.target


def constant(item):
    """Ignores the input: always the first candidate."""
    return item.candidates[0]


def nearest(item):
    """The attractor shortcut: the answer for the candidate or background word mentioned
    last before the blank (the critical fact's, without attractors after it)."""
    spec = ITEM_SETS[item.features["item_set"]]
    answer_for = dict(spec.pairs) | {t: t for t in spec.targets}

    def last(word):
        found = [x.start() for x in re.finditer(rf"\b{re.escape(word)}\b", item.context)]
        return max(found, default=-1)

    return answer_for[max(answer_for, key=last)]


def pulled_by_anything(item):
    """Loses the target to any attractor after the fact, related or unrelated."""
    f = item.features
    if f.get("n_attractors", 0) and f.get("position") == "after":
        return next(c for c in item.candidates if c != item.target)
    return item.target


@pytest.fixture(scope="module")
def pairs():
    suite = get_suite("distractors")
    return suite, suite.sampled_pairs(None, SMALL, 0)


def _card(results: pd.DataFrame) -> tuple[Competence, list[Effect]]:
    metrics = {
        "competence": m.competence(results, seed=0),
        "one_attractor_drops": m.one_attractor_drops(results, seed=0),
        "fact_swap_drops": m.fact_swap_drops(results, seed=0),
    }
    (competence, *effects) = headline(metrics)
    return competence, effects


def test_the_small_budget_pairs_related_and_unrelated_attractors_on_most_base_items(pairs):
    _, drawn = pairs
    bases = {p.original.id for p in drawn}
    kinds: dict[tuple[str, str], set[str]] = {}
    for p in drawn:
        f = p.intervened.features
        if p.intervention != "none" and f["n_attractors"] == 1 and f["position"] == "after":
            kind = "unrelated" if f["attractor_type"] == "unrelated" else "related"
            kinds.setdefault((f["setting"], kind), set()).add(p.original.id)
    assert len(drawn) - 2 * len(bases) == SMALL  # each base brings its row and its fact swap
    for setting in ("single", "multi"):
        both = kinds[(setting, "related")] & kinds[(setting, "unrelated")]
        assert len(both) >= 30, setting  # stratified alone: 0-3


def test_a_constant_answerer_is_not_assessable(pairs):
    competence, effects = _card(planted_results(*pairs, constant))
    assert competence.baseline_answer == "position:0" and competence.value == competence.baseline
    assert not competence.competent
    assert combined(effects, competence) == NOT_ASSESSABLE


def test_the_reader_is_competent_and_faithful(pairs):
    competence, effects = _card(planted_results(*pairs, reader))
    assert competence.competent and competence.value == 1.0
    assert len(effects) == 5  # two effects x two settings, and the fact-swap drop
    assert all(e.value == 0 and e.verdict == FAITHFUL for e in effects)
    assert {e.edge for e in effects} == set(EDGES) and all(e.control for e in effects)
    assert combined(effects, competence) == FAITHFUL


def test_the_nearest_candidate_shortcut_is_unfaithful_against_its_control(pairs):
    competence, effects = _card(planted_results(*pairs, nearest))
    assert competence.competent  # the fact is the only word it can pick without attractors
    controls = [e for e in effects if e.key.startswith("related_minus_unrelated")]
    assert controls and all(e.value > 0.8 and e.verdict == UNFAITHFUL for e in controls)
    assert combined(effects, competence) == UNFAITHFUL


def test_a_model_pulled_by_any_attractor_is_caught_by_the_related_drop(pairs):
    competence, effects = _card(planted_results(*pairs, pulled_by_anything))
    by_key = {e.key: e for e in effects}
    for setting in ("single", "multi"):
        assert by_key[f"related_drop_{setting}"].verdict == UNFAITHFUL
        assert by_key[f"related_minus_unrelated_{setting}"].verdict == FAITHFUL  # 0: no control
    assert combined(effects, competence) == UNFAITHFUL


def test_without_unrelated_attractors_the_control_says_so_and_decides_nothing(pairs):
    results = planted_results(*pairs, reader)
    competence, effects = _card(results[results["attractor_type"] != "unrelated"])
    controls = [e for e in effects if e.key.startswith("related_minus_unrelated")]
    assert controls and all(not e.has_interval for e in controls)
    assert all("no unrelated attractor after the critical fact" in e.reading for e in controls)
    assert math.isnan(controls[0].value)
    assert all(e.units is not None and not e.units.unit for e in controls)  # none to pair
    assert combined(effects, competence) == FAITHFUL  # the related drops decide


def test_every_effect_carries_its_units_per_competent_base_item(pairs):
    """Issue 31: each effect's per-base-item accuracies reproduce its value; their ids are
    the base items' (not the model's), so two models' units pair up, and a model competent
    on fewer base items has fewer units (the others are absent, not zero). The report's
    table of the effects does not show them."""
    from faithprobe.suites.distractors.tables import one_attractor_drops_table

    def mixed(item):  # the shortcut on about half the items, so the effects are not 0 or 1
        return nearest(item) if zlib.crc32(item.id.encode()) % 2 else reader(item)

    answerers = (reader, nearest, constant, mixed)
    results = pd.concat([planted_results(*pairs, a) for a in answerers], ignore_index=True)
    metrics = {
        "competence": m.competence(results, seed=0),
        "one_attractor_drops": m.one_attractor_drops(results, seed=0),
        "fact_swap_drops": m.fact_swap_drops(results, seed=0),
    }
    effects = [e for e in headline(metrics) if isinstance(e, Effect)]
    assert len(effects) == 5 * len(answerers)
    units: dict[str, dict[str, set[str]]] = {}
    for e in effects:
        assert e.units is not None and e.units.formula == "difference", e.key
        assert e.units.unit == e.units.cluster  # one base item, one cluster
        assert abs(e.units.value() - e.value) < 1e-9, (e.subject, e.key)
        assert not any(e.subject in u for u in e.units.unit)
        units.setdefault(e.key, {})[e.subject] = set(e.units.unit)
    for key, by_subject in units.items():
        assert by_subject["reader"] & by_subject["nearest"] & by_subject["mixed"], key
        assert by_subject["constant"] < by_subject["reader"], key  # its competent items only
    assert "units" not in one_attractor_drops_table(metrics).data.columns


def test_the_suite_metrics_hold_the_card_blocks_and_base_accuracy(pairs):
    suite, drawn = pairs
    metrics = suite.metrics(planted_results(suite, drawn, nearest), 0)
    assert {"competence", "base_accuracy", "one_attractor_drops"} <= set(metrics)
    assert {r["item_set"] for r in metrics["base_accuracy"]} == set(ITEM_SETS)
    (record,) = metrics["competence"]
    assert record["subject"] == "nearest" and record["competent"]
