"""The card's validity table at the small budget: the reference models (a reader faithful
by construction, degenerate models ignoring their input, competent shortcuts ignoring one
step's information or every intervention) run through every step, and
the card keeps its rules on them (:mod:`faithprobe.audit.validity`). Without the shared
data only the generated steps run; with it, all six. Asked by letter (``-o answer=letter``),
with and without the letters' probabilities, the candidate-scoring steps keep the same
rules."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.audit.plan import declared_steps
from faithprobe.audit.validity import (
    MEMORISER,
    READER,
    REASONING,
    SCORERS,
    SHORTCUT_STEPS,
    WRITERS,
    markdown,
    run_validity,
    violations,
)
from faithprobe.audit.verdicts_only import verdicts
from faithprobe.metrics.verdict import UNFAITHFUL
from faithprobe.reference_models import ReferenceSubject
from faithprobe.requests import LetterChoice

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def small_audit():
    """(step, reference) -> its verdict at the small budget, seed 0."""
    return run_validity(["small"], [0], SHARED if SHARED.is_dir() else None)["small", 0]


def test_reference_models_keep_the_cards_rules(small_audit):
    found = small_audit
    assert violations(found, budget="small") == []
    ran = {step for step, _ in found}
    assert {"distractors", "faithfulness-negation", "right-reasons"} <= ran
    assert REASONING in ran  # on the shipped BBH sample where the shared data is absent
    if SHARED.is_dir():
        assert len(ran) == 7
    for step in ran:  # every reference answers every step it is planted for
        assert all((step, r) in found for r in (WRITERS if step == REASONING else SCORERS))
        assert not any((step, r) in found for r in (SCORERS if step == REASONING else WRITERS))


def test_the_rules_catch_a_card_that_breaks_them(small_audit):
    found = {(step, m): v for (step, m), v in small_audit.items() if step == "distractors"}
    found["distractors", READER] = "inconclusive"
    found["distractors", "ref:constant"] = "faithful"
    found["distractors", "ref:nearest"] = "not assessable"
    found["distractors", MEMORISER] = "inconclusive"
    found["distractors", "ref:fact-blind"] = "faithful"
    broken = violations(found)
    assert len(broken) == 6 and all(b.startswith("distractors:") for b in broken)
    assert "distractors: no competent shortcut is called unfaithful" in broken
    found["distractors", "ref:fact-blind"] = "inconclusive"  # allowed at the small budget
    assert len(violations(found, budget="small")) == len(broken) - 1
    del found["distractors", "ref:fact-blind"]  # a step without its competent shortcut
    assert "distractors: no competent shortcut reference was run" in violations(found)


def test_every_step_has_a_competent_shortcut_called_unfaithful(small_audit):
    for step in {s for s, _ in small_audit}:
        own = [m for m, s in SHORTCUT_STEPS.items() if s == step]
        assert own and all(small_audit[step, m] != "faithful" for m in own), step
        caught = [*own, MEMORISER] if step != REASONING else own  # no writer memorises
        assert UNFAITHFUL in {small_audit[step, m] for m in caught}, step
        if step != REASONING:
            assert small_audit[step, MEMORISER] == UNFAITHFUL, step


def test_the_table_has_a_row_per_step(small_audit):
    table = markdown({("small", 0): small_audit})
    assert table.count("\n| small |") == len({s for s, _ in small_audit})


# -- the same rules when the references answer by letter (-o answer=letter) ---------------

LETTER_STEPS = ("distractors", "natural-logic", "confidence-shift")


class ParsedReference(ReferenceSubject):
    """A reference whose letter answers carry no probabilities, as a chat endpoint giving no
    top_logprobs answers: its letters are read from its replies alone."""

    def _answer(self, request, example):
        answer = super()._answer(request, example)
        return replace(answer, logprobs=None) if isinstance(answer, LetterChoice) else answer


@pytest.fixture(scope="module", params=[ReferenceSubject, ParsedReference],
                ids=["with-probabilities", "parsed-replies"])  # fmt: skip
def letter_audit(request, tmp_path_factory):
    """The candidate-scoring steps at the small budget, every reference asked by letter."""
    steps = [replace(s, options={**s.options, "answer": "letter"})
             for s in declared_steps() if s.name in LETTER_STEPS]  # fmt: skip
    subjects = [request.param(r.removeprefix("ref:")) for r in SCORERS]
    out = tmp_path_factory.mktemp("letters") / "audit"
    config = AuditConfig(models=[], out=out, data_dir=SHARED if SHARED.is_dir() else None,
                         steps=steps, cache=False, command="validity by letter")  # fmt: skip
    return json.loads((audit(config, subjects=subjects) / "metrics.json").read_text())


def test_asked_by_letter_the_references_keep_the_cards_rules(letter_audit):
    found = verdicts(letter_audit)
    assert violations(found, budget="small") == []
    ran = {step for step, _ in found}
    assert "distractors" in ran and (ran == set(LETTER_STEPS) or not SHARED.is_dir())
    parsed = any(e.get("needs") for e in letter_audit["effects"])
    mode = "letters parsed from replies" if parsed else "letters with probabilities (top_logprobs)"
    for step in letter_audit["steps"]:
        if step["status"] == "ran":
            assert step["answer_modes"] == {r: mode for r in SCORERS}, step["step"]
    # parsed replies give no confidences: those effects say so on the card, for every model
    needs = {(e["step"], e["subject"]) for e in letter_audit["effects"] if e.get("needs")}
    if parsed:
        assert all(e["verdict"] == "needs probabilities" for e in letter_audit["effects"]
                   if e.get("needs"))  # fmt: skip
        assert {s for s, _ in needs} <= {"confidence-shift"}
        if "confidence-shift" in ran:
            assert {m for _, m in needs} == set(SCORERS)
    else:
        assert not needs
