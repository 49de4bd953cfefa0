"""The distractors suite's critical-fact swap: the fact names another word of its class, so
the target moves. A model that follows the fact loses nothing there, one that answers from
memory loses about all; the attractor effects cannot tell them apart. Answered by planted
answerers (no model)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from faithprobe.audit.plan import STEPS
from faithprobe.datasets.stories import ITEM_SETS
from faithprobe.interventions import get as get_intervention
from faithprobe.metrics.verdict import FAITHFUL, UNFAITHFUL, Effect, combined
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.distractors.headline import headline
from faithprobe.suites.distractors.interventions import (
    EDITED_TEXT,
    FACT_SWAP,
    NO_STORY,
    NOT_A_PAIR,
)
from faithprobe.suites.distractors.report import _example_rows
from faithprobe.suites.distractors.tables import build_tables
from planted_cloze import planted_results

SMALL = STEPS[0].limits["small"]
UNKNOWN_PAIRS = {"Chile", "Poland", "baker", "the Kremlin", "cricket"}  # backgrounds


@pytest.fixture(scope="module")
def drawn():
    suite = get_suite("distractors")
    return suite, suite.sampled_pairs(None, SMALL, 0)


def _answerers(pairs):
    """Planted answerers: ``reader`` follows the fact; ``memory`` answers every item with
    its base item's target; ``partial_*`` do the same but know no target of the pairs in
    :data:`UNKNOWN_PAIRS` (they pick the first other candidate there)."""
    originals = {p.original.id: p.original for p in pairs}

    def recalled(item):
        return originals[item.features.get("base_id") or item.id]

    def knows(item, answer):
        if item.features["background"] in UNKNOWN_PAIRS:
            return next(c for c in item.candidates if c != item.target)
        return answer

    def reader(item):
        return item.target

    def memory(item):
        return recalled(item).target

    def partial_reader(item):
        return knows(item, item.target)

    def partial_memory(item):
        return knows(recalled(item), recalled(item).target)

    return reader, memory, partial_reader, partial_memory


def test_every_generated_base_item_gets_one_swap_to_a_candidate_of_its_set():
    suite = get_suite("distractors")
    pairs = suite.pairs(None, 0)
    swaps = [p for p in pairs if p.intervention == FACT_SWAP]
    bases = [p.original for p in pairs if p.intervention == "none"]
    assert len(swaps) == len(bases) == 44 and not any(p.dropped for p in swaps)
    # never the text of another base item ("Emma lives in Chile" when Emma is a Chile item):
    # a model, memorising or not, answers the same text alike, and the swap would test nothing
    assert not {p.intervened.context for p in swaps} & {b.context for b in bases}
    for pair in swaps:
        o, x = pair.original, pair.intervened
        spec = ITEM_SETS[o.features["item_set"]]
        assert x.id == pair.id == f"{o.id}|{FACT_SWAP}" and x.features["base_id"] == o.id
        assert x.features["swapped_from"] == o.features["background"]
        assert (x.features["background"], x.target) in spec.pairs and x.target != o.target
        assert x.target in o.candidates and x.candidates == o.candidates
        fact, query = x.context.split(". ")
        assert query == o.context.split(". ")[1] and x.features["background"] in fact
        assert o.features["background"] not in fact
        assert x.features["n_attractors"] == 0 and x.features["entity"] == o.features["entity"]
        assert pair.expectation.name == "answer follows the fact"
    drawn = {p.intervened.features["background"] for p in swaps if p.original.id.startswith("c")}
    assert len(drawn) > 2  # drawn per base item, not one fixed swap per set


def test_swaps_are_deterministic_for_a_seed_and_drawn_per_seed():
    suite = get_suite("distractors")

    def swapped(seed):
        return {
            p.original.id: p.intervened.context
            for p in suite.pairs(None, seed)
            if p.intervention == FACT_SWAP
        }

    assert swapped(3) == swapped(3)
    base = next(p.original for p in suite.pairs(None, 0) if p.intervention == FACT_SWAP)
    swap = get_intervention(FACT_SWAP)
    drawn = [swap.apply(base, seed=seed).example.target for seed in range(12)]
    assert drawn == [swap.apply(base, seed=seed).example.target for seed in range(12)]
    assert len(set(drawn)) > 1  # the seed draws the swapped-in fact


def test_the_sample_brings_one_swap_per_base_item_outside_the_limit(drawn):
    _, pairs = drawn
    bases = {p.original.id for p in pairs if p.intervention == "none"}
    swaps = [p for p in pairs if p.intervention == FACT_SWAP]
    assert sorted(p.original.id for p in swaps) == sorted(bases)
    assert len(pairs) - len(bases) - len(swaps) == SMALL


def test_a_reader_loses_nothing_and_a_memoriser_everything(drawn):
    suite, pairs = drawn
    reader, memory, partial_reader, partial_memory = _answerers(pairs)
    results = pd.concat(
        [planted_results(suite, pairs, a) for a in (reader, memory, partial_reader, partial_memory)]
    )
    metrics = suite.metrics(results, 0)
    drops = {r["subject"]: r for r in metrics["fact_swap_drops"]}
    assert drops["reader"]["value"] == 0 and drops["reader"]["n_clusters"] == 43
    assert drops["memory"]["value"] == 1
    # knowing fewer targets is not ignoring the fact: the first side is the model's accuracy
    # on the base items stating the swapped-in fact, so a partial reader still scores 0
    assert drops["partial_reader"]["value"] == 0
    assert drops["partial_reader"]["n_clusters"] < drops["reader"]["n_clusters"]
    base = {r["subject"]: r["value"] for r in metrics["competence"]}
    assert base["partial_memory"] < 0.9
    assert drops["partial_memory"]["value"] == pytest.approx(base["partial_memory"], abs=0.15)
    swaps = results[results["intervention"] == FACT_SWAP]
    met = swaps.groupby("subject")["expectation_met"].mean()
    assert met["reader"] == 1 and met["memory"] == 0

    effects = {e.subject: e for e in headline(metrics) if isinstance(e, Effect)
               if e.key == "fact_swap_drop"}  # fmt: skip
    assert effects["reader"].verdict == FAITHFUL
    assert effects["memory"].verdict == UNFAITHFUL
    assert effects["memory"].edge == "distractors.fact_swap_drop" and effects["memory"].control
    # the attractor effects alone call the memoriser faithful; the swap does not
    rest = [e for e in headline(metrics) if isinstance(e, Effect) and e.subject == "memory"]
    assert all(e.verdict == FAITHFUL for e in rest if e.key != "fact_swap_drop")
    (competence,) = [c for c in headline(metrics)[:4] if c.subject == "memory"]
    assert combined(rest, competence) == UNFAITHFUL

    table = build_tables(metrics)["fact_swap_drops"]
    assert list(table.display["subject"]) == sorted(drops)
    assert "Swaps made: 43." in table.note and "units" not in table.data.columns
    shown = _example_rows(swaps, seed=0, subjects=sorted(drops))
    assert shown["condition"].str.match(r"critical fact swapped: [\w ]+ → [\w ]+$").all()


def test_results_without_swaps_keep_their_report(drawn):
    """Runs made before the swap (no swap rows): no record, no table, no section."""
    from faithprobe.suites.distractors.report import DistractorsReport

    suite, pairs = drawn
    reader = _answerers(pairs)[0]
    results = planted_results(suite, [p for p in pairs if p.intervention != FACT_SWAP], reader)
    metrics = suite.metrics(results, 0)
    assert metrics["fact_swap_drops"] == [] and "fact_swaps" not in metrics["dataset"]
    assert "fact_swap_drops" not in build_tables(metrics)
    assert "fact_swap" not in [s.id for s in DistractorsReport.sections(build_tables(metrics),
                                                                       metrics)]  # fmt: skip


def test_data_items_without_a_story_lose_their_swap_with_a_counted_reason(tmp_path):
    suite = get_suite("distractors")
    generated = [p.original for p in suite.pairs(None, 0) if p.intervention == "none"][:2]
    good, edited = generated
    lines = [
        {"id": good.id, "context": good.context, "target": good.target,
         "candidates": list(good.candidates), "suffix": ".", "features": good.features},
        {"id": "edited", "context": edited.context + " Really.", "target": edited.target,
         "candidates": list(edited.candidates), "features": edited.features},
        {"id": "own", "context": "Ann is a pilot. Ann flies", "target": "planes",
         "candidates": ["planes", "cars"], "features": {"base_id": None, "n_attractors": 0}},
        {"id": "wrong-target", "context": good.context, "target": good.candidates[-1],
         "candidates": list(good.candidates), "features": good.features},
    ]  # fmt: skip
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in lines))
    pairs = suite.pairs(data, 0)  # (a run keeps only the base items its variants use)
    swaps = {p.original.id: p for p in pairs if p.intervention == FACT_SWAP}
    assert not swaps[good.id].dropped
    assert swaps["edited"].dropped == EDITED_TEXT
    assert swaps["own"].dropped == NO_STORY
    assert swaps["wrong-target"].dropped == NOT_A_PAIR
    results = planted_results(suite, pairs, _answerers(pairs)[0])
    dropped = results[results["dropped_reason"].notna()]
    assert len(dropped) == 3 and dropped["expectation_met"].isna().all()
    assert dropped["intervened_id"].isna().all()
    metrics = suite.metrics(results, 0)
    assert metrics["dataset"]["fact_swaps"] == {
        "made": 1,
        "not_made": [{"reason": r, "count": 1} for r in sorted([EDITED_TEXT, NO_STORY,
                                                                NOT_A_PAIR])],
    }  # fmt: skip
    (record,) = metrics["fact_swap_drops"]
    # the one swap's fact is stated by no base row of this file: left out, no interval
    assert record["n_swapped"] == 1 and record["n_fact_unasked"] == 1
    assert record["note"] and record["n_clusters"] == 0
    assert "not made: " in build_tables(metrics)["fact_swap_drops"].note
