"""The critical-fact swap of the distractors suite: does the model use the fact at all?

The attractor interventions hold the critical fact fixed, so a model that ignores every
change (one answering each item from memory of its original) keeps the target and loses
nothing to them. The swap changes the fact itself: its background word is replaced by
another of its item set ("Sebastian lives in France" -> "... lives in Chile"), the story is
re-rendered, and the target becomes that word's (Santiago). The candidate set stays the
same, and the swapped background is drawn per base item from the seed among the item set's
other backgrounds whose target is a candidate and whose story is not already another item of
the data (``pool``: "Emma lives in France" swapped to Chile must not be the base item "Emma
lives in Chile", which a model would answer alike, from memory or not). A model that uses the
fact moves to the new target; one that answers from memory, or ignores the story, keeps the
old one.

A swap needs the item's story: a data file's own items may not carry one (their features
lack a known item set, or their text is not the story's rendering). Such an item gets no
swap, and the reason is counted (:meth:`~faithprobe.records.Outcome.dropped`), never an
error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from faithprobe.datasets.stories import ITEM_SETS, Story
from faithprobe.expectations import Behaviour, Expectation
from faithprobe.interventions import register
from faithprobe.records import ClozeExample, Outcome

if TYPE_CHECKING:  # `faithprobe list` imports this module; numpy is imported where used
    import numpy as np

FACT_SWAP = "fact_swap"
STORY_FIELDS = ("item_set", "entity", "background", "target")

NO_STORY = "no story: features lack item_set, entity, background or target of a known item set"
NOT_A_PAIR = "the critical fact and target are not a background/target pair of the item set"
EDITED_TEXT = "the context is not its story's rendering"
HAS_ATTRACTORS = "the base item already has attractors"
NO_OTHER_FACT = (
    "no other background of the item set has its target among the candidates and a story "
    "that is not already an item"
)


def _follows(b: Behaviour) -> bool | None:
    if b.intervened_prediction is None or b.gold is None:
        return None
    return b.intervened_prediction == b.gold


ANSWER_FOLLOWS_FACT = Expectation(
    name="answer follows the fact",
    description="the critical fact now names another word of its class, whose target is the "
    "new gold; a model that uses the fact gives it, one answering from memory keeps the old",
    check=_follows,
)


def story_of(example: ClozeExample) -> Story | str:
    """The story ``example`` tells, or why it tells none a swap can edit."""
    f = example.features
    if not all(isinstance(f.get(k), str) for k in STORY_FIELDS) or f["item_set"] not in ITEM_SETS:
        return NO_STORY
    story = Story.from_features(f)
    if not dict(story.spec.pairs).get(story.background) == story.target == example.target:
        return NOT_A_PAIR
    if story.attractors:
        return HAS_ATTRACTORS
    if story.render_context() != example.context:
        return EDITED_TEXT
    return story


@register(
    FACT_SWAP,
    family="attractors",
    changes="replaces the critical fact's background word by another of its item set "
    "(France -> Chile), so the target becomes that word's (Santiago)",
    holds="the key entity, the query, the candidate set; no attractor is added",
    expectation=ANSWER_FOLLOWS_FACT,
)
def swap_fact(
    example: ClozeExample, rng: np.random.Generator, pool: Sequence[ClozeExample] = ()
) -> Outcome:
    """``example`` with its critical fact swapped; ``pool``: the data's items, whose texts
    a swap may not repeat."""
    story = story_of(example)
    if isinstance(story, str):
        return Outcome.dropped(story)
    told = {item.context for item in pool}
    others = [
        edited
        for b, t in story.spec.pairs
        if b != story.background and t != example.target and t in example.candidates
        if (edited := story.with_(background=b, target=t)).render_context() not in told
    ]
    if not others:
        return Outcome.dropped(NO_OTHER_FACT)
    edited = others[int(rng.integers(len(others)))]
    root = example.features.get("base_id") or example.id
    features = {**edited.to_features(), "base_id": root, "swapped_from": story.background}
    return Outcome.kept(  # the candidates and the suffix stay as they were
        replace(
            example,
            id=f"{example.id}|{FACT_SWAP}",
            context=edited.render_context(),
            target=edited.target,
            features=features,
        )
    )
