"""Attractor and filler insertion for distractor cloze items (Pandia & Ettinger 2021).

Each intervention edits the :class:`~faithprobe.datasets.stories.Story` behind an item
and renders it again. The critical fact and the query are held fixed, so the gold answer
does not change: a model that uses the critical fact keeps choosing the target.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from faithprobe.datasets.attractor_sets import attractor_pool, variant_count, variant_id
from faithprobe.datasets.stories import (
    FILLERS,
    NAMES,
    NEUTRAL_SENTENCES,
    POSITIONS,
    Story,
)
from faithprobe.expectations import ANSWER_UNCHANGED
from faithprobe.interventions import register
from faithprobe.records import ClozeExample, Outcome

if TYPE_CHECKING:  # `faithprobe list` imports this module; numpy is imported where used
    import numpy as np


HOLDS = "the key entity, its critical fact, the query and the gold target"
TOO_FEW = "fewer than n attractors of the type are left to add"


def _combinations(story: Story, attractor_type: str, n: int, rng: np.random.Generator):
    """All n-subsets of the related pool; for unrelated attractors (a larger pool), as many
    randomly drawn subsets as a related type has, so the three types are balanced."""
    pool = attractor_pool(story, attractor_type)
    if attractor_type != "unrelated":
        return list(itertools.combinations(pool, n))
    every = list(itertools.combinations(pool, n))
    size = variant_count(story, attractor_type, n)
    picks = rng.choice(len(every), size=size, replace=False)
    picks.sort()
    return [every[i] for i in picks]


def _variants(
    example: ClozeExample,
    rng: np.random.Generator,
    attractor_type: str,
    *,
    setting: str,
    n: int,
    position: str,
) -> list[ClozeExample]:
    import numpy as np

    story = Story.from_features(example.features)
    if position not in POSITIONS[setting]:
        raise ValueError(f"position {position!r} does not exist in the {setting} setting")
    others_pool = [name for name, _ in NAMES if name != story.entity]
    out = []
    for k, combo in enumerate(_combinations(story, attractor_type, n, rng)):
        words = tuple(rng.permutation(np.array(combo, dtype=object)).tolist())
        others = ()
        if setting == "multi":
            others = tuple(rng.choice(np.array(others_pool, dtype=object), n, replace=False))
        edited = story.with_(
            setting=setting,
            attractor_type=attractor_type,
            attractors=words,
            others=others,
            position=position,
        )
        out.append(
            ClozeExample(
                id=variant_id(example.id, attractor_type, setting, position, n, k),
                context=edited.render_context(),
                target=example.target,
                candidates=example.candidates,
                suffix=example.suffix,
                features={**edited.to_features(), "base_id": _root(example)},
            )
        )
    return out


def _root(example: ClozeExample) -> str:
    return example.features.get("base_id") or example.id


def _register_attractor(attractor_type: str, name: str, what: str) -> None:
    @register(
        name,
        family="attractors",
        changes=f"adds n {what} after, before or around the critical fact "
        "(single- or multiple-entity setting)",
        holds=HOLDS,
        expectation=ANSWER_UNCHANGED,
    )
    def add(example: ClozeExample, rng: np.random.Generator, **params) -> Outcome:
        variants = _variants(example, rng, attractor_type, **params)
        return Outcome.kept(*variants) if variants else Outcome.dropped(TOO_FEW)


_register_attractor("B", "attractors.background", "words of the background word's class (B-type)")
_register_attractor("T", "attractors.target", "words of the target's class (T-type)")
_register_attractor("unrelated", "attractors.unrelated", "unrelated properties")


def _draw(rng: np.random.Generator, pool: tuple[str, ...], n: int) -> tuple[str, ...]:
    import numpy as np

    return tuple(rng.choice(np.array(pool, dtype=object), n, replace=False))


def _retold(example: ClozeExample, edited: Story, tag: str) -> Outcome:
    """``example`` told as ``edited`` (no attractor added), id suffixed with ``tag``."""
    return Outcome.kept(
        ClozeExample(
            id=f"{example.id}|{tag}",
            context=edited.render_context(),
            target=example.target,
            candidates=example.candidates,
            suffix=example.suffix,
            features={**edited.to_features(), "base_id": _root(example)},
        )
    )


def _register_retelling(name: str, part: str, pool: tuple[str, ...], tag: str, changes: str):
    """Register ``name``: the story's ``part`` set to n phrases drawn from ``pool``, no
    attractor added; the new item's id ends in ``|{tag}{n}``."""

    @register(name, family="attractors", changes=changes, holds=HOLDS, expectation=ANSWER_UNCHANGED)
    def retell(example: ClozeExample, rng: np.random.Generator, *, n: int) -> Outcome:
        story = Story.from_features(example.features)
        return _retold(example, story.with_(**{part: _draw(rng, pool, n)}), f"{tag}{n}")


_register_retelling(
    "filler",
    "filler",
    FILLERS,
    "filler",
    "inserts n unrelated properties as a relative clause between the key entity and its "
    "critical fact",
)
_register_retelling(
    "padding",
    "padding",
    NEUTRAL_SENTENCES,
    "pad",
    "adds n neutral filler sentences after the critical fact, and no attractor (the method's "
    "control for length and distance at n = 0)",
)
