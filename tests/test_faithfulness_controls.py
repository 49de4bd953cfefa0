"""The faithfulness suite's competence and controlled effects (issue 30, "a verdict you can
bet on"): models with planted behaviour, answering through the suite's own rows and metrics,
read by its headline. A reader is faithful on both steps; a model that ignores its input
(a constant answer, always *unknown*, a coin, the first word of the story) never is."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from faithprobe.metrics.verdict import (
    FAITHFUL,
    NOT_ASSESSABLE,
    UNFAITHFUL,
    Competence,
    Effect,
    combined,
)
from faithprobe.records import QAExample
from faithprobe.requests import Generation
from faithprobe.runner import result_rows
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.faithfulness.controls import gold_keys
from faithprobe.suites.faithfulness.headline import EDGES, headline

Policy = Callable[[QAExample], str]


class PlantedSubject:
    """A chat-only model whose reply to each question is ``policy(example)``."""

    accepts = frozenset({"generation"})
    has_chat_template = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.fingerprint = name


def run_policies(suite, pairs, policies: dict[str, Policy], seed: int = 0) -> dict:
    """The suite's metrics.json for ``pairs`` answered by every planted model."""
    examples = {x.id: x for p in pairs if not p.dropped for x in (p.original, p.intervened)}
    rows = []
    for name, policy in policies.items():
        answers = {i: Generation(policy(x), 1) for i, x in examples.items()}
        rows += result_rows(suite, pairs, PlantedSubject(name), answers)
    return suite.metrics(pd.DataFrame(rows), seed)


def verdicts(metrics: dict) -> dict[str, str]:
    found = headline(metrics)
    competence = {c.subject: c for c in found if isinstance(c, Competence)}
    effects = [e for e in found if isinstance(e, Effect)]
    return {s: combined([e for e in effects if e.subject == s], c) for s, c in competence.items()}


def _coin(example: QAExample, options: tuple[str, ...]) -> str:
    return options[zlib.crc32(example.id.encode()) % len(options)]


# -- the predicate–argument probe (faithfulness-negation) --------------------------------

PROBE_POLICIES: dict[str, Policy] = {
    "reader": lambda x: x.answers[0],
    "always-no": lambda x: "no",
    "always-yes": lambda x: "yes",  # also what answering the first candidate gives
    "unknown": lambda x: "unknown",
    "coin": lambda x: _coin(x, ("yes", "no")),
    # yes when the colour occurs in the story (word overlap; the object always does)
    "overlap": lambda x: "yes" if x.features["colour"] in x.context else "no",
    # reads who has which colour, but takes "that was not red" for "red"
    "negation-blind": lambda x: "yes" if x.features["own_colour"] else "no",
}


@pytest.fixture(scope="module")
def probe():
    """The probe suite, its pairs and its metrics at the audit's budgets (24, 60)."""
    suite = get_suite("faithfulness", {"probe": "predicate-argument"})
    pairs = suite.pairs(None, 0)
    metrics = {n: run_policies(suite, suite.sample(pairs, n, 0), PROBE_POLICIES) for n in (24, 60)}
    return suite, pairs, metrics


@pytest.mark.parametrize("limit", [24, 60])
def test_probe_reader_is_faithful_and_no_degenerate_model_is(probe, limit):
    found = verdicts(probe[2][limit])
    assert found.pop("reader") == FAITHFUL
    assert found.pop("negation-blind") == UNFAITHFUL  # competent, blind to "not"
    assert set(found.values()) == {NOT_ASSESSABLE}, found


def test_negated_accuracy_is_read_over_the_constant_answer(probe):
    """The issue's case: always 'no' is right on two thirds of the negated questions, which
    the old headline read against chance 0.5. Its excess over the best constant is 0, and
    it is not competent on the original stories."""
    metrics = probe[2][24]
    excess = {e.subject: e for e in headline(metrics) if getattr(e, "key", "") ==
              "negation_excess"}  # fmt: skip
    no = excess["always-no"]
    assert (no.value, no.ci_low, no.ci_high) == (0.0, 0.0, 0.0) and no.verdict == UNFAITHFUL
    assert "always 'no'" in no.control and "67%" in no.control
    reader = excess["reader"]
    assert reader.value == reader.ci_low == pytest.approx(1 / 3)  # the same in every story
    assert reader.edge == "faithfulness.negation_excess" and reader.n == 6
    competence = {c.subject: c for c in headline(metrics) if isinstance(c, Competence)}
    assert competence["always-no"].baseline == 0.5 and not competence["always-no"].competent
    assert competence["reader"].competent and competence["reader"].n == 24


def test_probe_samples_whole_stories(probe):
    suite, pairs, _ = probe
    for limit, stories in ((24, 6), (25, 7), (60, 15)):
        sample = suite.sample(pairs, limit, 0)
        assert len({p.original.features["story_id"] for p in sample}) == stories
        assert len({p.original.id for p in sample}) == 4 * stories
    assert suite.sample(pairs, 24, 0) == suite.sample(list(reversed(pairs)), 24, 0)[::-1]


# -- deletion on a SQuAD-format file (faithfulness-deletion) -----------------------------

FILLER = "The town has a small harbour. Many visitors come in the summer."


def squad_doc(n: int) -> dict:
    """``n`` passages of three sentences, one question each, its answer in the second
    sentence (so TS-R deletes it and re-inserts the bare answer)."""
    paragraphs = []
    for i in range(n):
        answer = f"Person{i}"
        context = f"Town{i} lies on a river. It was founded by {answer} long ago. {FILLER}"
        qa = {"id": f"q{i}", "question": f"Who founded Town{i}?",
              "answers": [{"text": answer, "answer_start": context.index(answer)}]}  # fmt: skip
        paragraphs.append({"context": context, "qas": [qa]})
    return {"version": "1.1", "data": [{"title": "T", "paragraphs": paragraphs}]}


def _deleted(x: QAExample) -> bool:
    return "-R" in x.features.get("variant", "")


DELETION_POLICIES: dict[str, Policy] = {
    "reader": lambda x: "unknown" if _deleted(x) else x.answers[0],
    "unknown": lambda x: "unknown",
    "constant": lambda x: "Person0",
    "first": lambda x: x.context.split()[0],  # the first word (entity) of the passage
    "coin": lambda x: _coin(x, ("unknown", x.context.split()[0])),
    # answers well, and abstains as often on the original as after the deletion
    "abstains-at-random": lambda x: _coin(x, ("unknown", x.answers[0])),
}


@pytest.fixture(scope="module")
def deletion(tmp_path_factory):
    """The deletion metrics of 60 passages at the audit's budgets (20, 60)."""
    path = tmp_path_factory.mktemp("controls") / "squad.json"
    path.write_text(json.dumps(squad_doc(60)))
    suite = get_suite("faithfulness", {"splitter": "pysbd"})
    pairs = suite.pairs(path, 0)
    return {n: run_policies(suite, suite.sample(pairs, n, 0), DELETION_POLICIES) for n in (20, 60)}


@pytest.mark.parametrize("limit", [20, 60])
def test_deletion_reader_is_faithful_and_no_degenerate_model_is(deletion, limit):
    found = verdicts(deletion[limit])
    assert found.pop("reader") == FAITHFUL
    assert found.pop("abstains-at-random") == UNFAITHFUL
    assert set(found.values()) == {NOT_ASSESSABLE}, found


def test_always_unknown_gains_nothing_over_the_original_stories(deletion):
    """The issue's case: 'unknown after TS-R >= 0.5' was met by a model that always says
    unknown. Its unknown rate after TS-R minus on OS is 0, and its EM on OS is 0."""
    metrics = deletion[20]
    found = headline(metrics)
    gain = {e.subject: e for e in found if getattr(e, "key", "") == "unknown_gain_ts_r"}
    unknown = gain["unknown"]
    assert (unknown.value, unknown.ci_high) == (0.0, 0.0) and unknown.verdict == UNFAITHFUL
    scores = {(r["subject"], r["variant"], r["metric"]): r["value"] for r in metrics["scores"]}
    assert scores[("unknown", "TS-R", "unk")] == 1.0  # what the old headline read
    assert gain["reader"].value == gain["reader"].ci_low == 1.0
    assert gain["reader"].edge == "faithfulness.unknown_gain"
    competence = {c.subject: c for c in found if isinstance(c, Competence)}
    assert competence["unknown"].value == 0.0 and not competence["unknown"].competent
    # every gold differs: the best constant answer is right on one question
    assert competence["constant"].baseline == pytest.approx(1 / 20)
    assert competence["constant"].value <= competence["constant"].baseline


def _negation_rows(subject: str, policy: Callable[[str], str]) -> list[dict]:
    """Result rows of 12 yes/no questions on 12 passages, each on its original story (OS)
    and negated (NEG, the gold flipped), answered ``policy(gold)``."""
    rows = []
    for i, (org, mod) in enumerate([("yes", "no"), ("no", "yes"), ("yes", "no")] * 4):
        for variant, gold in (("OS", org), ("NEG", mod)):
            rows.append({"subject": subject, "variant": variant, "original_id": f"q{i}",
                         "passage_id": f"p{i}", "answers": [gold], "prediction": policy(gold),
                         "dropped_reason": None, "predicted_unknown": False})  # fmt: skip
    return rows


def test_comb_acc_is_read_over_the_constant_answer():
    """Comb-Acc needs the original and the negated question right; an edit flips the gold,
    so no constant answer is right on both sides (baseline 0)."""
    from faithprobe.suites.faithfulness.controls import deletion_controls

    rows = _negation_rows("reader", lambda gold: gold)
    controlled = deletion_controls(pd.DataFrame(rows), 0)["controlled"]
    (comb,) = [r for r in controlled if r["effect"] == "comb_acc_excess"]
    assert comb["control"] == 0.0 and comb["constant_answer"] is None
    assert comb["value"] == comb["ci_low"] == 1.0
    (effect,) = [e for e in headline({"controlled": controlled}) if e.key == "comb_acc_excess"]
    assert effect.verdict == FAITHFUL and effect.edge == "faithfulness.comb_acc_excess"


def test_every_effect_carries_its_units_per_question(probe, deletion):
    """Issue 31: each effect's per-question numbers reproduce its value, their ids are the
    questions' (not the model's), so two models' units pair up; the report's table of the
    effects does not show them."""
    from faithprobe.suites.faithfulness.controls import deletion_controls
    from faithprobe.suites.faithfulness.report import CONTROLLED

    rows = _negation_rows("reader", lambda gold: gold) + _negation_rows("yes", lambda _: "yes")
    negation = deletion_controls(pd.DataFrame(rows), 0)
    runs = [probe[2][24], deletion[20], negation]
    effects = [e for run in runs for e in headline(run) if isinstance(e, Effect)]
    assert {e.key for e in effects} >= {
        "negation_excess", "formatting_flips_space", "formatting_flips_newline",
        "unknown_gain_ts_r", "comb_acc_excess",
    }  # fmt: skip
    for e in effects:
        assert e.units is not None and e.units.formula == "difference", e.key
        assert abs(e.units.value() - e.value) < 1e-9, (e.subject, e.key)
        assert not any(e.subject in u for u in e.units.unit)
    units: dict[str, dict[str, set[str]]] = {}
    for e in effects:
        units.setdefault(e.key, {})[e.subject] = set(e.units.unit)
    for key, by_subject in units.items():
        ids = list(by_subject.values())
        assert len(ids) >= 2 and set.intersection(*ids), key
    for run in runs:
        table = CONTROLLED(run)
        assert not any(c.startswith("units") for c in table.data.columns)


def test_gold_keys_are_the_scored_answers():
    assert gold_keys(["The Broncos", "Broncos"]) == {"text:broncos"}
    assert gold_keys([]) == gold_keys(["unknown"]) == {"text:unknown"}
    assert gold_keys(["yes"]) == {"text:yes"}


def test_every_edge_is_named_and_justified(probe, deletion):
    found = headline(probe[2][24]) + headline(deletion[20])
    effects = [e for e in found if isinstance(e, Effect)]
    assert {e.edge for e in effects} <= set(EDGES)
    for e in effects:
        assert e.region.bound == EDGES[e.edge][0] and e.control
    assert all(len(why) > 80 for _, why in EDGES.values())
    assert np.isfinite([c.p_value for c in found if isinstance(c, Competence)]).all()
