"""The distractor cloze dataset: base items and their attractor variants.

Base items come from the four item sets in :mod:`faithprobe.generators.stories`, each
background -> target pair told about ``names_per_pair`` entities. Variants are produced by
the registered interventions (``attractors.*`` and ``filler``), one per condition:

    setting (single, multi) x attractor type (B, T, unrelated) x n (1..3)
    x position (single: after, between; multi: after, between, later) x filler (0, ...)

Related (B, T) attractors are enumerated exhaustively: every n-subset of the other words
of the class (C(5, n) for six-pair sets, C(3, n) for sports). Unrelated attractors are drawn
as the same number of subsets, so types are balanced. Filler levels > 0 add items with
0..3 attractors after a filler clause; the 0-attractor filler items measure filler alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from faithprobe.errors import UsageError
from faithprobe.examples import ClozeExample
from faithprobe.generators.stories import (
    ATTRACTOR_TYPES,
    ITEM_SETS,
    NAMES,
    POSITIONS,
    SETTINGS,
    base_story,
)
from faithprobe.interventions import get as get_intervention
from faithprobe.options import option
from faithprobe.seeding import rng_for

INTERVENTION_FOR_TYPE = {
    "B": "attractors.background",
    "T": "attractors.target",
    "unrelated": "attractors.unrelated",
}


@dataclass(frozen=True)
class DistractorConfig:
    """What ``faithprobe generate distractors`` builds (``-o KEY=VALUE``; lists
    comma-separated)."""

    names_per_pair: int = option(2, "entities per background/target pair")
    settings: tuple[str, ...] = option(SETTINGS, "settings to include: single, multi")
    attractor_types: tuple[str, ...] = option(ATTRACTOR_TYPES, "attractor types: B, T, unrelated")
    counts: tuple[int, ...] = option((1, 2, 3), "numbers of attractors (1..3)")
    positions: tuple[str, ...] = option(
        ("after", "between", "later"), "attractor positions: after, between, later"
    )
    fillers: tuple[int, ...] = option((0,), "filler levels to include (0..3; 0 = none)")
    item_sets: tuple[str, ...] = option(tuple(ITEM_SETS), "item sets to include")

    def __post_init__(self) -> None:
        checks = {
            "settings": (self.settings, SETTINGS),
            "attractor_types": (self.attractor_types, ATTRACTOR_TYPES),
            "positions": (self.positions, ("after", "between", "later")),
            "item_sets": (self.item_sets, tuple(ITEM_SETS)),
        }
        for name, (given, allowed) in checks.items():
            bad = [v for v in given if v not in allowed]
            if bad:
                raise UsageError(f"{name}: unknown {bad}; choose from {list(allowed)}")
        if not 1 <= self.names_per_pair <= len(NAMES):
            raise UsageError(f"names_per_pair must be between 1 and {len(NAMES)}")
        if any(not 1 <= n <= 3 for n in self.counts):
            raise UsageError("counts must lie in 1..3")
        if any(not 0 <= f <= 3 for f in self.fillers):
            raise UsageError("fillers must lie in 0..3")


def base_items(config: DistractorConfig, seed: int) -> list[ClozeExample]:
    """One item per (item set, pair, entity name); names drawn per pair from the seed."""
    items = []
    for set_name in config.item_sets:
        spec = ITEM_SETS[set_name]
        for i, (background, _) in enumerate(spec.pairs):
            rng = rng_for(seed, "distractors.names", set_name, background)
            picks = rng.choice(len(NAMES), size=config.names_per_pair, replace=False)
            for j in np.sort(picks):
                story = base_story(set_name, i, NAMES[j][0])
                items.append(
                    ClozeExample(
                        id=f"{set_name}:{background}:{story.entity}".replace(" ", "_"),
                        context=story.render_context(),
                        target=story.target,
                        candidates=spec.targets,
                        suffix=".",
                        features={**story.to_features(), "base_id": None},
                    )
                )
    return items


def variants(base: ClozeExample, config: DistractorConfig, seed: int) -> Iterator[ClozeExample]:
    """Every condition of ``config`` applied to one base item."""
    for n_filler in config.fillers:
        start = base
        if n_filler:
            start = get_intervention("filler").apply(base, seed=seed, n=n_filler).example
            yield start
        for setting in config.settings:
            for attractor_type in config.attractor_types:
                intervention = get_intervention(INTERVENTION_FOR_TYPE[attractor_type])
                for position in config.positions:
                    if position not in POSITIONS[setting]:
                        continue
                    for n in config.counts:
                        yield from intervention.apply(
                            start, seed=seed, setting=setting, n=n, position=position
                        ).examples


def generate(config: DistractorConfig, seed: int) -> list[ClozeExample]:
    """Base items followed by all their variants (the full dataset)."""
    bases = base_items(config, seed)
    return bases + [v for b in bases for v in variants(b, config, seed)]
