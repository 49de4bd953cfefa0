"""Comparative → antonym counterfactuals (Ray Choudhury, Rogers & Augenstein, "Machine
reading, fast and slow"): in a comparison question ("Which film came out earlier, Red
Harbor or Blue Field?") the comparative is swapped for its antonym ("... later ..."), so
the gold answer becomes the other entity. A model that compares the two values flips its
answer; one that matched the question to a sentence by surface cues may not.

* ``comparative_antonym`` (variant ``CF``): the method's in-distribution map,
  :data:`IN_DISTRIBUTION`.
* ``comparative_antonym_ood`` (variant ``CF-ood``): out-of-distribution paraphrases,
  :data:`OUT_OF_DISTRIBUTION` -- rarer wordings a model has seldom seen in training. Where a
  comparative has several, one is drawn with the example's seeded rng (one changed
  example per original, so every original weighs the same in the CF-ood scores).
  Two paraphrases the brief listed are left out because they *mean* the original, so the
  answer would not change: "first → less recently" and "earlier → less recently"; "first"
  therefore has no out-of-distribution paraphrase.

The comparison (entities, comparative) is found afresh with
:func:`faithprobe.datasets.comparisons.comparison`, so any QA example works -- a SQuAD
question, or a generated item read back from SQuAD JSON. The replacement keeps the
original's capitalisation; only the comparative's words change ("came out earlier" →
"came out later"). The changed example's gold is the other entity (``answers``,
``answer_starts`` at its span in the context); ``features`` say ``original_comparative``,
``comparative`` (the new one), ``variant``, ``original_id`` and ``expected`` (the other
entity's name), with the entity and comparative spans moved to the new question.

A dropped example's :class:`~faithprobe.records.Outcome` says why (one of
:data:`faithprobe.datasets.comparisons.REASONS` or ``NOT_IN_MAP``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from faithprobe.datasets.comparisons import comparison
from faithprobe.expectations import ANSWER_OTHER_ENTITY
from faithprobe.interventions import register
from faithprobe.records import Outcome, QAExample

if TYPE_CHECKING:  # only annotations: `faithprobe list` imports this module, not numpy
    import numpy as np

IN_DISTRIBUTION: dict[str, tuple[str, ...]] = {
    "earlier": ("later",),
    "later": ("earlier",),
    "first": ("later",),
    "more recently": ("earlier",),
    "older": ("younger",),
    "younger": ("older",),
}
OUT_OF_DISTRIBUTION: dict[str, tuple[str, ...]] = {
    "older": ("less old", "more junior", "less mature", "less grown-up"),
    "earlier": ("subsequently", "thereafter"),
    "later": ("less recently",),
    "younger": ("more old", "less junior", "more mature", "more grown-up"),
    "more recently": ("less recently", "longer ago"),
}
NOT_IN_MAP = "the comparative has no antonym in the map"

# name -> (antonym map, variant, what changes)
ANTONYMS = {
    "comparative_antonym": (IN_DISTRIBUTION, "CF", "the comparative, to its antonym"),
    "comparative_antonym_ood": (
        OUT_OF_DISTRIBUTION,
        "CF-ood",
        "the comparative, to an out-of-distribution paraphrase of its antonym",
    ),
}


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if like[0].isupper() else word


def counterfactual(
    example: QAExample, rng: np.random.Generator, antonyms: dict[str, tuple[str, ...]], variant: str
) -> Outcome:
    """``example`` with its comparative swapped by ``antonyms`` and the other entity as gold."""
    found = comparison(example)
    if found.example is None:
        return found
    features = found.example.features
    original = features["comparative"]
    if original not in antonyms:
        return Outcome.dropped(NOT_IN_MAP, detail=original)
    choices = antonyms[original]
    new = choices[int(rng.integers(len(choices)))] if len(choices) > 1 else choices[0]
    s, e = features["comparative_span"]
    new_text = _cased(new, example.question[s:e])
    shift = len(new_text) - (e - s)

    def moved(span: tuple[int, int]) -> tuple[int, int]:
        return (span[0] + shift, span[1] + shift) if span[0] >= e else span

    entities = [
        {**ent, "question_span": moved(ent["question_span"])} for ent in features["entities"]
    ]
    other = entities[1 - features["answer_entity"]]
    changed = replace(
        example,
        id=f"{example.id}/{variant.lower()}",
        question=example.question[:s] + new_text + example.question[e:],
        answers=(other["name"],),
        answer_starts=(other["context_span"][0],),
        features={
            **features,
            "entities": entities,
            "answer_entity": 1 - features["answer_entity"],
            "comparative_span": (s, s + len(new_text)),
            "original_comparative": original,
            "comparative": new,
            "variant": variant,
            "original_id": example.id,
            "expected": other["name"],
        },
    )
    return Outcome.kept(changed)


def _registered(antonyms: dict[str, tuple[str, ...]], variant: str):
    def intervention(example: QAExample, rng: np.random.Generator, **params) -> Outcome:
        return counterfactual(example, rng, antonyms, variant)

    return intervention


for _name, (_map, _variant, _changes) in ANTONYMS.items():
    register(
        _name,
        family="comparative",
        changes=_changes,
        holds="the context and the two compared entities",
        expectation=ANSWER_OTHER_ENTITY,
    )(_registered(_map, _variant))
