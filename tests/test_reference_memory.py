"""The competent shortcut references (faithprobe.reference_models.memory): shown where each
intervened example came from, ``ref:memoriser`` answers it as its original, a step's
shortcut does so for that step's interventions only, and ``ref:mix:P`` on a seeded share
of the base items."""

from __future__ import annotations

from dataclasses import replace

import pytest

from faithprobe.errors import ModelError
from faithprobe.records import ClozeExample, Origin, QAExample
from faithprobe.reference_models import ReferenceSubject, check_reference, reference_names
from faithprobe.reference_models.memory import SHORTCUTS
from faithprobe.requests import CandidateScoreRequest, SpanAnswerRequest
from faithprobe.runner import RunConfig, answer_all, origins_of, prepare
from faithprobe.subjects import load_subject

BASE = ClozeExample("b", "Emma lives in Chile. The capital of Emma's country is",
                    "Santiago", ("Paris", "Santiago", "Warsaw"))  # fmt: skip
SWAPPED = replace(BASE, id="b/swap", context=BASE.context.replace("Chile", "France"),
                  target="Paris")  # fmt: skip


def best(answer) -> int:
    return answer.logprobs.index(max(answer.logprobs))


def asked(subject, example, origin=None):
    request = CandidateScoreRequest(example.context, example.candidates)
    subject.read_examples({request: example}, {example.id: origin} if origin else {})
    return best(subject.answer([request])[0])


def test_the_memoriser_answers_an_intervened_item_as_its_original():
    memoriser, reader = ReferenceSubject("memoriser"), ReferenceSubject("reader")
    origin = Origin(BASE, "fact_swap")
    assert asked(reader, SWAPPED, origin) == 0  # Paris: the reader follows the fact
    assert asked(memoriser, SWAPPED, origin) == 1  # Santiago: the original's answer
    assert asked(memoriser, BASE) == asked(reader, BASE) == 1  # originals: the reader


def test_a_shortcut_ignores_its_own_steps_interventions_only():
    blind = ReferenceSubject("fact-blind")
    assert asked(blind, SWAPPED, Origin(BASE, "fact_swap")) == 1
    assert asked(blind, SWAPPED, Origin(BASE, "I0")) == 0
    assert {b.step for b in SHORTCUTS.values()} == {
        "faithfulness-negation", "faithfulness-deletion", "right-reasons", "natural-logic",
        "distractors", "confidence-shift",
    }  # fmt: skip


def test_a_recalled_answer_is_placed_in_the_new_request():
    original = QAExample("q", "Oslo is cold. Rome is warm.", "Which city is cold?", ("Oslo",),
                         answer_starts=(0,), rationale=((0, 13),))  # fmt: skip
    moved = replace(original, id="q/cf", context="Rome is warm. Oslo is cold.", rationale=())
    gone = replace(moved, id="q/gone", context="Rome is warm.")
    memoriser = ReferenceSubject("memoriser")
    for example, want in ((moved, (14, 18)), (gone, (-1, -1))):
        request = SpanAnswerRequest(example.question, example.context)
        memoriser.read_examples({request: example}, {example.id: Origin(original, "x")})
        answer = memoriser.answer([request])[0]
        assert (answer.start, answer.end) == want


def test_the_mix_draws_per_base_item_from_its_seed():
    bases = [replace(BASE, id=f"b{i}") for i in range(200)]

    def memorised(share: float, seed: int) -> list[bool]:
        subject = load_subject(f"ref:mix:{share:g},seed={seed}")
        return [asked(subject, replace(SWAPPED, id=f"{b.id}/s"), Origin(b, "fact_swap")) == 1
                for b in bases]  # fmt: skip

    assert not any(memorised(1, 0)) and all(memorised(0, 0))
    half = memorised(0.5, 0)
    assert 70 < sum(half) < 130
    assert memorised(0.5, 0) == half != memorised(0.5, 1)  # the seed, nothing else, draws
    assert sum(memorised(0.8, 0)) < sum(memorised(0.5, 0))  # fewer memorised at larger P
    assert (
        load_subject("ref:mix:0.5,seed=1").fingerprint
        != load_subject("ref:mix:0.5,seed=2").fingerprint
    )


@pytest.mark.parametrize("name", ["mix:2", "mix:x", "mix:", "memorizer"])
def test_unknown_or_malformed_names_are_refused(name):
    with pytest.raises(ModelError, match="ref:"):
        check_reference(name)


def test_every_name_listed_loads():
    for name in reference_names():
        ReferenceSubject(name.replace("mix:P", "mix:0.5"))


def test_the_runner_shows_each_intervened_examples_origin(tmp_path):
    prepared = prepare(RunConfig("distractors", models=[], limit=40, out=tmp_path / "r",
                                 cache=False), check_models=False)  # fmt: skip
    pairs = prepared.pairs
    origins = origins_of(pairs)
    originals = {p.original.id for p in pairs}
    assert origins and not originals & set(origins)
    assert all(origins[p.intervened.id].original.id == p.original.id
               for p in pairs if p.intervened.id in origins)  # fmt: skip
    memoriser = ReferenceSubject("memoriser")
    answers = answer_all(prepared.suite, pairs, memoriser, None)

    def picked(example):
        return example.candidates[best(answers[example.id])]

    made = [p for p in pairs if p.intervened.id in origins]
    assert made and all(picked(p.intervened) == picked(p.original) == p.original.target
                        for p in made)  # fmt: skip
