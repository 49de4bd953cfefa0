"""How many attractor variants a story gets, and their ids: shared by the attractor
interventions that build the variants and by the distractors generator's plan, which counts
and names them before anything is built. Kept in the data layer, below both."""

from __future__ import annotations

from math import comb

from faithprobe.datasets.stories import UNRELATED, Story


def attractor_pool(story: Story, attractor_type: str) -> list[str]:
    """The words an attractor of ``attractor_type`` may be drawn from for ``story``."""
    spec = story.spec
    if attractor_type == "B":
        return [b for b in spec.backgrounds if b != story.background]
    if attractor_type == "T":
        return [t for t in spec.targets if t != story.target]
    return [u for u in UNRELATED if u not in story.filler]


def variant_count(story: Story, attractor_type: str, n: int) -> int:
    """How many variants adding ``n`` attractors of ``attractor_type`` to ``story`` makes
    (:mod:`faithprobe.interventions.attractors`), known without drawing or rendering them."""
    pool = comb(len(attractor_pool(story, attractor_type)), n)
    if attractor_type != "unrelated":
        return pool
    return min(comb(len(story.spec.pairs) - 1, n), pool)


def variant_id(base_id: str, attractor_type: str, setting: str, position: str, n: int, k: int):
    """The id of the ``k``-th variant with ``n`` attractors added to the item ``base_id``."""
    return f"{base_id}|{attractor_type}|{setting}|{position}|n{n}|{k}"
