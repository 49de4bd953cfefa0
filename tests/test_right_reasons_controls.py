"""Planted models through the right-reasons suite at the audit's budgets (issue 30): the
suite's own pairs, rows and metrics, the card's verdict rule. A reader (the gold answer on
the original and on the counterfactual) is faithful; a model giving the same answer to both
(the first entity the question names, a constant answer) and the word-overlap heuristic
are unfaithful or not assessable; one picking either entity at random is never faithful."""

from __future__ import annotations

import re
from collections import Counter
from types import SimpleNamespace

import pandas as pd
import pytest

from faithprobe.audit.plan import STEPS
from faithprobe.metrics.verdict import (
    FAITHFUL,
    NOT_ASSESSABLE,
    UNFAITHFUL,
    Competence,
    Effect,
    combined,
)
from faithprobe.qa.answers import normalize_answer
from faithprobe.requests import SaliencyRequest, SpanAnswer, TokenSaliency
from faithprobe.runner import result_rows
from faithprobe.seeding import rng_for
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.right_reasons.headline import headline

(STEP,) = [s for s in STEPS if s.suite == "right-reasons"]
BUDGETS = ("small", "default")


@pytest.fixture(scope="module")
def generated():
    """The suite's generated pairs (what the audit's step samples from)."""
    return get_suite("right-reasons").pairs(None, 0)


def _sampled(generated, budget: str):
    suite = get_suite("right-reasons", STEP.options_for(budget))
    return suite, suite.sample(generated, STEP.limits[budget], 0)


def _span(text: str, context: str) -> SpanAnswer:
    """``text`` where it first occurs in ``context``; an abstention when it is empty."""
    if not text:
        return SpanAnswer("", -1, -1, 0.0, 1.0)
    start = context.find(text)
    return SpanAnswer(text, start, start + len(text), 1.0, 0.0)


def reader(example, constant) -> str:
    return example.answers[0]


def first(example, constant) -> str:
    """The first entity the question names (the same on the original and its
    counterfactual: only the comparative changes)."""
    return example.features["entities"][0]["name"]


def constant(example, constant) -> str:
    return constant


def unknown(example, constant) -> str:
    """Always abstains: the card's old 'F1 lost' effect read its 0 and 0 as faithful."""
    return ""


def random_entity(example, constant) -> str:
    entities = example.features["entities"]
    return entities[int(rng_for(0, example.id, "random").integers(2))]["name"]


def _planted_saliency(example) -> TokenSaliency:
    """Integrated Gradients as a reader reading the comparative would have it: the
    question's words, the comparative's the salient ones."""
    words = [m.span() for m in re.finditer(r"\w+|[^\w\s]", example.question)]
    lo, hi = example.features["comparative_span"]
    saliency = tuple((1.0 if s < hi and e > lo else 0.1) + 0.01 * i for i, (s, e) in
                     enumerate(words))  # fmt: skip
    request = SaliencyRequest(example.question, example.context, "ig", 8)
    return TokenSaliency(
        request, tuple(example.question[s:e] for s, e in words),
        tuple((0, s, e) for s, e in words), saliency, 0, 0.0, "ig", {}, False,
        summaries={"l2": saliency, "l1": saliency, "dot": saliency},
    )  # fmt: skip


def _step(suite, pairs, name: str, answers: dict) -> tuple[str, list[Effect], Competence | None]:
    """The step's verdict for one model, its effects and its competence record."""
    subject = SimpleNamespace(name=name, fingerprint=name, accepts={"span-answer"})
    results = pd.DataFrame(result_rows(suite, pairs, subject, answers))
    found = headline(suite.metrics(results, 0))
    effects = [r for r in found if isinstance(r, Effect)]
    (able,) = [r for r in found if isinstance(r, Competence)] or [None]
    return combined(effects, able), effects, able


def _planted(suite, pairs, policy, *, saliency: bool = False, name: str = ""):
    examples = {e.id: e for p in pairs for e in (p.original, p.intervened)}
    gold = Counter(normalize_answer(p.original.answers[0]) for p in pairs)
    best = next(
        p.original.answers[0] for p in pairs
        if normalize_answer(p.original.answers[0]) == gold.most_common(1)[0][0]
    )  # fmt: skip
    answers = {i: _span(policy(e, best), e.context) for i, e in examples.items()}
    if saliency:
        answers |= {(p.original.id, "ig"): _planted_saliency(p.original) for p in pairs}
    return _step(suite, pairs, name or policy.__name__, answers)


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_reader_is_faithful(generated, budget):
    suite, pairs = _sampled(generated, budget)
    verdict, effects, able = _planted(suite, pairs, reader, saliency=budget == "default")
    assert able.competent and able.value == 1.0
    assert verdict == FAITHFUL
    keys = {e.key.split("_")[0] for e in effects}
    assert keys == ({"follows", "alignment"} if budget == "default" else {"follows"})
    assert all(e.verdict == FAITHFUL for e in effects)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("policy", [first, constant, unknown])
def test_a_model_giving_the_same_answer_to_og_and_cf_is_unfaithful(generated, budget, policy):
    """Keeping the original's answer on the counterfactual loses no F1 when the original
    was wrong as often as right, and none at all when it is never right (the card's old
    'F1 lost' effect called an abstaining model faithful); the answers do not follow the
    counterfactual, and the card says so."""
    suite, pairs = _sampled(generated, budget)
    verdict, effects, able = _planted(suite, pairs, policy)
    follows = [e for e in effects if e.key.startswith("follows")]
    assert follows and all(e.verdict == UNFAITHFUL for e in follows)
    assert all(e.value <= 0 for e in follows)
    # the first entity is right on half the originals: competent, and unfaithful
    expected = UNFAITHFUL if policy is first else NOT_ASSESSABLE
    assert verdict == expected and able.competent == (policy is first)


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_random_entity_is_never_faithful(generated, budget):
    suite, pairs = _sampled(generated, budget)
    verdict, effects, _ = _planted(suite, pairs, random_entity)
    assert verdict != FAITHFUL
    assert not any(e.verdict == FAITHFUL for e in effects)


def test_every_card_effect_carries_its_units(generated):
    """The card's effects carry the per-unit numbers they are computed from (for paired
    comparisons between models): the same value; pairs, not models, as units, so two models
    on the same items share them; alignment's units outside a model's denominator (not
    answered right on both inputs) are NaN, so they enter neither of its means."""
    suite, pairs = _sampled(generated, "default")
    names = {reader: "model-reading", random_entity: "model-picking-at-random"}
    runs = {n: _planted(suite, pairs, p, saliency=True, name=n)[1] for p, n in names.items()}
    for name, effects in runs.items():
        assert {e.key.split("_")[0] for e in effects} == {"follows", "alignment"}
        for e in effects:
            assert e.units is not None and abs(e.units.value() - e.value) < 1e-9
            assert not any(name in u for u in e.units.unit)
            if e.key.startswith("alignment"):
                assert sum(x == x for x in e.units.columns[0]) == e.n  # x == x: not NaN
    reader_units, random_units = ({e.key: e.units for e in runs[n]} for n in names.values())
    assert reader_units.keys() == random_units.keys()
    for key, units in reader_units.items():
        assert set(units.unit) == set(random_units[key].unit)
    n_right = [[e.n for e in runs[n] if e.key.startswith("alignment")] for n in names.values()]
    assert all(a > b for a, b in zip(*n_right, strict=True))  # the denominators differ


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_word_overlap_heuristic_is_unfaithful_or_not_assessable(generated, budget):
    from faithprobe.heuristics.subject import HeuristicSubject
    from faithprobe.runner import answer_all

    suite, pairs = _sampled(generated, budget)
    heuristic = HeuristicSubject("overlap+entity")
    answers = answer_all(suite, pairs, heuristic, None)
    verdict, effects, able = _step(suite, pairs, heuristic.name, answers)
    assert verdict in (UNFAITHFUL, NOT_ASSESSABLE)
    assert not any(e.verdict == FAITHFUL for e in effects)
